// A real OpenID provider for the tests: the npm package oidc-provider
// (a certified implementation), started on loopback, with what an
// organisation's provider gives an MCP host: discovery, dynamic client
// registration, the authorization code flow with PKCE, resource
// indicators (RFC 8707) and JWT access tokens for the resource with the
// scopes asked for. Its login and consent pages are the package's own
// development pages; browse() fills them in as a person would.
import http from 'node:http';
import https from 'node:https';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

function signingKey(type, options, kid, alg) {
	const { privateKey } = generateKeyPairSync(type, options);
	return { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}

// startIdp({ resource, scopes, accounts, alg, host, tls }): the provider
// listening on host (127.0.0.1 by default; a port of its own), over https
// with tls ({ cert, key }): { issuer, provider, close() }; clients are
// registered beside the stock host's. accounts maps a
// login to its claims ({ groups: [...] }); tokens for `resource` carry
// the scopes granted and `groups`.
export async function startIdp({ resource, scopes, accounts = {}, alg = 'ES256', ttl = 600,
				 host = '127.0.0.1', tls = null, clients = [] }) {
	const server = tls ? https.createServer(tls) : http.createServer();
	await new Promise((ok) => server.listen(0, host, ok));
	const issuer = `${tls ? 'https' : 'http'}://${host}:${server.address().port}`;
	const keys = [
		signingKey('ec', { namedCurve: 'P-256' }, 'es-1', 'ES256'),
		signingKey('rsa', { modulusLength: 2048 }, 'rs-1', 'RS256'),
		signingKey('ed25519', {}, 'ed-1', 'EdDSA'),
	];
	const provider = new Provider(issuer, {
		jwks: { keys },
		ttl: { AccessToken: ttl, Interaction: 600, Session: 3600, Grant: 3600,
		       AuthorizationCode: 60, RefreshToken: 3600 },
		scopes: ['openid', 'offline_access', ...scopes],
		clients: [{
			client_id: 'stock-host',
			token_endpoint_auth_method: 'none',
			application_type: 'native',
			redirect_uris: ['http://127.0.0.1:33418/callback'],
			grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'],
		}, ...clients],
		pkce: { required: () => true },
		features: {
			devInteractions: { enabled: true },
			registration: { enabled: true },
			resourceIndicators: {
				enabled: true,
				defaultResource: () => resource,
				useGrantedResource: () => true,
				getResourceServerInfo: (ctx, indicator) => {
					if (indicator !== resource)
						throw new Provider.errors.InvalidTarget();
					return {
						scope: scopes.join(' '),
						audience: indicator,
						accessTokenTTL: ttl,
						accessTokenFormat: 'jwt',
						jwt: { sign: { alg } },
					};
				},
			},
		},
		findAccount: (ctx, id) => ({
			accountId: id,
			claims: () => ({ sub: id, ...(accounts[id] || {}) }),
		}),
		extraTokenClaims: async (ctx, token) => {
			const who = accounts[token.accountId];
			return who && who.groups ? { groups: who.groups } : undefined;
		},
	});
	provider.proxy = false;
	server.on('request', provider.callback());
	return { issuer, provider, keys, close: () => new Promise((ok) => server.close(ok)) };
}

// What a person does in a browser at the provider: open the
// authorization URL, sign in as login, consent; returns the URL the
// provider redirects to (the client's redirect_uri with ?code=...).
export async function browse(authorizationUrl, login, redirectPrefix) {
	const jar = new Map();
	const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
	const keep = (res) => {
		for (const c of res.headers.getSetCookie())
			jar.set(c.split('=')[0], c.split(';')[0].split('=').slice(1).join('='));
	};
	let url = String(authorizationUrl), body = null;
	for (let i = 0; i < 12; i++) {
		const res = await fetch(url, {
			method: body ? 'POST' : 'GET',
			redirect: 'manual',
			headers: body ? { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }
				: { cookie: cookie() },
			body,
		});
		keep(res);
		body = null;
		if (res.status >= 300 && res.status < 400) {
			url = new URL(res.headers.get('location'), url).href;
			if (url.startsWith(redirectPrefix))
				return url;
			continue;
		}
		const page = await res.text();
		const form = /action="([^"]+)"/.exec(page);
		const prompt = /name="prompt" value="([a-z]+)"/.exec(page);
		if (res.status !== 200 || !form || !prompt)
			throw new Error(`the provider's page at ${url}: ${res.status} ${page.slice(0, 300)}`);
		url = new URL(form[1].replaceAll('&amp;', '&'), url).href;
		body = prompt[1] === 'login'
			? new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString()
			: new URLSearchParams({ prompt: prompt[1] }).toString();
	}
	throw new Error('the provider never redirected back');
}
