// bind-localhost.mjs is preloaded (NODE_OPTIONS=--import=<this file>) into the
// MCP conformance suite so that every TCP server it starts (mock MCP servers,
// mock authorization servers) listens on 127.0.0.1 only. The suite calls
// listen(0) without a host, which would bind every interface.
//
// Node routes every TCP listen through net.Server.prototype._listen2
// (setupListenHandle) with the resolved address; patching that keeps the
// binding synchronous (the suite reads server.address() right after listen),
// which passing a host to listen() would not (it adds a DNS lookup).
import net from 'node:net';

const HOST = '127.0.0.1';
const origListen2 = net.Server.prototype._listen2;

if (typeof origListen2 !== 'function') {
  throw new Error('bind-localhost: net.Server.prototype._listen2 missing; cannot force 127.0.0.1');
}

// With BIND_LOCALHOST_ANNOUNCE set, every TCP listener also reports its
// address on stderr as "bind-localhost: listening on 127.0.0.1:<port>", so a
// harness can start a server on port 0 and learn the port it got.
const announce = Boolean(process.env.BIND_LOCALHOST_ANNOUNCE);

net.Server.prototype._listen2 = function listen2(address, port, addressType, ...rest) {
  // port -1 with an fd/handle or a pipe path: not a TCP address; leave it.
  if (typeof port === 'number' && port >= 0) {
    if (announce) {
      this.once('listening', () => {
        const a = this.address();
        if (a && typeof a === 'object') process.stderr.write(`bind-localhost: listening on ${a.address}:${a.port}\n`);
      });
    }
    return origListen2.call(this, HOST, port, 4, ...rest);
  }
  return origListen2.call(this, address, port, addressType, ...rest);
};
