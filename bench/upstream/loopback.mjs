// bench/upstream.sh: loaded with `node --import` into the two node servers
// it listens with (server-everything's streamableHttp mode and supergateway),
// which take a port and no address and would listen on every interface: a
// listen(port) without a host is given 127.0.0.1, so the benchmark is
// reachable from this machine only.
import net from 'node:net';

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
	const port = args[0];

	if ((typeof port === 'number' || (typeof port === 'string' && /^[0-9]+$/.test(port))) &&
	    typeof args[1] !== 'string')
		args.splice(1, 0, '127.0.0.1');
	return listen.apply(this, args);
};
