import t from 'tap';
import { matchesPattern, RouteTree } from '../../../src/http/route-pattern.js';

/**
 * RouteTree, the router's lookup: the most specific pattern wins whatever the
 * order routes were added in (literal, then :param, then a final *), a branch
 * that leads nowhere is left for the next, and parameters come back in order.
 */

/** A tree of the patterns (each route's value is its pattern), added in the order given. */
function tree(patterns: readonly string[]): RouteTree<string> {
  const routes = new RouteTree<string>();
  for (const pattern of patterns) routes.add(pattern, pattern);
  return routes;
}

/** The pattern `path` finds and the parameters it took, or null. */
function find(routes: RouteTree<string>, path: string): { pattern: string; params: string[] } | null {
  const params: string[] = [];
  const pattern = routes.find(path, params);
  return pattern === null ? null : { pattern, params };
}

const EVENTS = ['/events/:tenant/:queue', '/events/sandbox/:tenant/:queue', '/events/*'];

t.test('a literal beats a param beats a final *, in either order of adding', async (t) => {
  const patterns = ['/a/b', '/a/:x', '/a/*'];
  for (const order of [patterns, [...patterns].reverse(), ['/a/:x', '/a/*', '/a/b']]) {
    const routes = tree(order);
    t.same(find(routes, '/a/b'), { pattern: '/a/b', params: [] }, `literal (${order.join(' ')})`);
    t.same(find(routes, '/a/c'), { pattern: '/a/:x', params: ['c'] }, `param (${order.join(' ')})`);
    t.same(find(routes, '/a/c/d'), { pattern: '/a/*', params: [] }, `* takes what the others do not (${order.join(' ')})`);
  }
});

t.test('backtracking: a literal branch that leads nowhere is left for the param route', async (t) => {
  for (const order of [EVENTS, [...EVENTS].reverse()]) {
    const routes = tree(order);
    // The sandbox route needs one more segment: /events/sandbox/q is tenant "sandbox", queue "q".
    t.same(find(routes, '/events/sandbox/q'), { pattern: '/events/:tenant/:queue', params: ['sandbox', 'q'] });
    t.same(find(routes, '/events/sandbox/t1/q'), { pattern: '/events/sandbox/:tenant/:queue', params: ['t1', 'q'] });
    t.same(find(routes, '/events/t1/q'), { pattern: '/events/:tenant/:queue', params: ['t1', 'q'] });
    t.same(find(routes, '/events/t1/q/x'), { pattern: '/events/*', params: [] }, 'the params a dead end took are not left behind');
    t.same(find(routes, '/events/sandbox/t1/q/x'), { pattern: '/events/*', params: [] });
  }
  const deep = tree(['/a/:x/:y/end', '/a/b/:y']);
  t.same(find(deep, '/a/b/c/end'), { pattern: '/a/:x/:y/end', params: ['b', 'c'] }, 'the literal b leads nowhere two segments down');
  t.same(find(deep, '/a/b/c'), { pattern: '/a/b/:y', params: ['c'] });
  t.equal(find(deep, '/a/b/c/other'), null);
});

t.test('a deeper * on the literal branch is taken before a shallower param route', async (t) => {
  const routes = tree(['/events/:tenant/:queue', '/events/sandbox/*']);
  t.same(find(routes, '/events/sandbox/q'), { pattern: '/events/sandbox/*', params: [] });
  t.same(find(routes, '/events/other/q'), { pattern: '/events/:tenant/:queue', params: ['other', 'q'] });
});

t.test('an empty segment matches no param', async (t) => {
  const routes = tree(['/events/:tenant/:queue']);
  t.equal(find(routes, '/events//q'), null);
  t.equal(find(routes, '/events/t/'), null);
  t.equal(find(routes, '/events/t'), null, 'a segment short');
  t.equal(find(routes, '/events/t/q/'), null, 'a trailing slash is one more (empty) segment');
  const withStar = tree(['/events/:tenant/:queue', '/events/*']);
  t.same(find(withStar, '/events//q'), { pattern: '/events/*', params: [] }, 'the * takes it instead');
});

t.test("the '/' route", async (t) => {
  const routes = tree(['/', '/healthz']);
  t.same(find(routes, '/'), { pattern: '/', params: [] });
  t.same(find(routes, '/healthz'), { pattern: '/healthz', params: [] });
  t.equal(find(routes, '/x'), null);
  t.equal(find(routes, '//'), null);
  t.equal(find(routes, ''), null, 'not a path');
  t.equal(find(routes, 'healthz'), null, 'not a path');
  t.equal(find(tree(['/healthz']), '/'), null, "no '/' route: '/' finds nothing");
});

t.test('a final * takes the rest, the bare prefix and the prefix with a slash included', async (t) => {
  const routes = tree(['/static/*']);
  t.same(find(routes, '/static/a/b/c'), { pattern: '/static/*', params: [] });
  t.same(find(routes, '/static/'), { pattern: '/static/*', params: [] });
  t.same(find(routes, '/static'), { pattern: '/static/*', params: [] });
  t.equal(find(routes, '/staticx'), null, 'a segment is compared whole');
  t.equal(find(routes, '/other/a'), null);
  const root = tree(['/*']);
  t.same(find(root, '/'), { pattern: '/*', params: [] });
  t.same(find(root, '/anything/at/all'), { pattern: '/*', params: [] });
  const literalStar = tree(['/a/*/b']);
  t.same(find(literalStar, '/a/*/b'), { pattern: '/a/*/b', params: [] }, 'a * that is not last is a literal segment');
  t.equal(find(literalStar, '/a/x/b'), null);
});

t.test('params come back in order, still percent-encoded', async (t) => {
  const routes = tree(['/t/:tenant/q/:queue/m/:message']);
  t.same(find(routes, '/t/ten%201/q/orders/m/42'), { pattern: '/t/:tenant/q/:queue/m/:message', params: ['ten%201', 'orders', '42'] });
  const params = ['left-over'];
  routes.find('/t/a/q/b/m/c', params);
  t.same(params, ['left-over', 'a', 'b', 'c'], 'pushed after what the array held');
  const missed: string[] = [];
  t.equal(routes.find('/t/a/q/b/m', missed), null);
  t.same(missed, [], 'nothing left behind when nothing matched');
});

t.test('what the tree finds, matchesPattern (the 405 check) agrees with', async (t) => {
  const patterns = [...EVENTS, '/', '/healthz', '/static/*', '/t/:tenant/q/:queue', '/t/:tenant/q/dead-letters'];
  const routes = tree(patterns);
  const paths = ['/', '/healthz', '/healthz/', '/events/a/b', '/events/sandbox/a/b', '/events/sandbox/a', '/events/', '/events', '/static', '/static/x/y', '/t/a/q/b', '/t/a/q/dead-letters', '/t//q/b', '/nope'];
  for (const path of paths) {
    const found = routes.find(path, []);
    if (found !== null) t.ok(matchesPattern(found, path), `${path} → ${found}`);
    else t.notOk(patterns.some((p) => matchesPattern(p, path)), `${path}: no pattern matches`);
  }
});
