import { createHash, createHmac } from 'node:crypto';

/**
 * The sender's side of signed-request ingress (contract §3), for the load
 * generator. The body is the same for every request of a run, so its hash is
 * computed once; each request then costs one small HMAC and a counter nonce.
 * The bench's paths carry no query, so QUERY is the empty line.
 */
export function signedRequests({ requests, key }) {
  let counter = 0;
  const prefix = `${process.pid.toString(36)}-${Date.now().toString(36)}-`;
  return requests.map((request) => {
    const bodySha = createHash('sha256').update(request.body).digest('hex');
    const stable = { ...request.headers };
    return {
      ...request,
      setupRequest(req) {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const nonce = prefix + (counter++).toString(36);
        const canonical = `POST\n${req.path}\n\n${key.keyId}\n${timestamp}\n${nonce}\n${bodySha}`;
        req.headers = {
          ...stable,
          'x-service-key-id': key.keyId,
          'x-service-timestamp': timestamp,
          'x-service-nonce': nonce,
          'x-service-content-sha256': bodySha,
          'x-service-signature': createHmac('sha256', key.secret).update(canonical).digest('hex'),
        };
        return req;
      },
    };
  });
}
