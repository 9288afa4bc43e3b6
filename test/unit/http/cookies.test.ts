import t from 'tap';
import { clearCookie, readCookie, setCookie } from '../../../src/http/cookies.js';

t.test('readCookie finds the named cookie among others', async (t) => {
  t.equal(readCookie('a=1; sg_console=sgs_x; b=2', 'sg_console'), 'sgs_x');
  t.equal(readCookie('sg_console=one;sg_console=two', 'sg_console'), 'one', 'the first wins');
  t.equal(readCookie('xsg_console=1', 'sg_console'), null);
  t.equal(readCookie(undefined, 'sg_console'), null);
  t.equal(readCookie('sg_console=', 'sg_console'), '');
});

t.test('setCookie is always HttpOnly; Secure only when asked', async (t) => {
  t.equal(setCookie('n', 'v', { maxAgeSeconds: 60, path: '/', sameSite: 'Strict', secure: false }), 'n=v; HttpOnly; SameSite=Strict; Path=/; Max-Age=60');
  t.equal(setCookie('n', 'v', { maxAgeSeconds: 60, path: '/x', sameSite: 'Lax', secure: true }), 'n=v; HttpOnly; SameSite=Lax; Path=/x; Max-Age=60; Secure');
  t.equal(clearCookie('n', { path: '/', sameSite: 'Strict', secure: false }), 'n=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
});
