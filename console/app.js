/*
 * toolgate's approval console (docs/CONSOLE.md): plain JavaScript, no
 * framework, no build step, nothing fetched from elsewhere. Every value a
 * ticket carries (arguments, previews, descriptions, reasons) is put on the
 * page as text (textContent), never as HTML.
 */
'use strict';

(() => {
	const $ = (id) => document.getElementById(id);
	const FOLD = 400; /* characters of a string shown before it is folded */
	let me = null; /* {principal, csrf} */
	let events = null; /* the EventSource of the live list */
	let shown = null; /* the ticket on the page, or null */
	let pause = 0; /* seconds before the live list is asked for again */

	/* What a screen would not show as it is (controls but newline and
	 * tab, format and default-ignorable characters: bidi overrides,
	 * zero-width and tag characters), written as \u{...} so a person sees
	 * it (docs/ADMIN.md); arguments and previews come escaped already. */
	const HIDDEN = /(?![\n\t])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
	const visible = (text) => String(text).replace(HIDDEN,
		(c) => '\\u{' + c.codePointAt(0).toString(16).toUpperCase() + '}');

	/* An element with attributes and children; strings become text, their
	 * hidden characters shown. */
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (k === 'class') e.className = v;
			else if (k === 'text') e.textContent = visible(v);
			else e.setAttribute(k, v);
		}
		for (const k of kids)
			if (k !== null && k !== undefined) e.append(k instanceof Node ? k : visible(k));
		return e;
	}

	function say(text, error) {
		const s = $('status');
		s.textContent = visible(text || '');
		s.className = error ? 'error' : '';
	}

	class Unauthorized extends Error {}

	/* The console's API: JSON both ways; a change carries the CSRF token. */
	async function api(method, path, body) {
		const opts = { method, credentials: 'same-origin', headers: {} };
		if (method !== 'GET') {
			opts.headers['Content-Type'] = 'application/json';
			if (me) opts.headers['X-CSRF-Token'] = me.csrf;
			opts.body = JSON.stringify(body || {});
		}
		const r = await fetch('api/' + path, opts);
		let j = {};
		try { j = await r.json(); } catch (e) { /* an empty answer */ }
		if (r.status === 401 && path !== 'session') {
			signedOut(j.error ? j.error.message : 'Signed out.');
			throw new Unauthorized();
		}
		return { status: r.status, body: j };
	}

	/* ---- time, as a person reads it ---- */

	function span(seconds) {
		const s = Math.abs(seconds);
		if (s < 60) return Math.round(s) + ' s';
		if (s < 3600) return Math.round(s / 60) + ' min';
		if (s < 86400) return (s / 3600).toFixed(s < 36000 ? 1 : 0) + ' h';
		return (s / 86400).toFixed(1) + ' days';
	}
	const now = () => Date.now() / 1000;
	const ago = (t) => span(now() - t) + ' ago';
	const left = (t) => (t > now() ? span(t - now()) + ' left' : 'expired');
	const local = (t) => new Date(t * 1000).toLocaleString();

	function risk(info) {
		if (!info) return el('span', { text: 'tool no longer in the catalogue' });
		const r = el('span', { class: 'risk-' + info.risk, text: info.authority + ', ' + info.risk + ' risk' });
		const undo = info.irreversible ? ' — irreversible: ' + info.irreversible
			: info.compensation ? ' — undone by ' + info.compensation : '';
		return el('span', {}, r, undo);
	}

	/* ---- views ---- */

	function show(id) {
		for (const v of ['signin', 'list', 'ticket', 'history']) $(v).hidden = v !== id;
		$('nav').hidden = !me;
		$('main').focus();
	}

	const LOGIN_FAILED = {
		state: 'That sign-in came back too late, or to another browser: sign in again.',
		provider: 'The identity provider did not sign you in.',
		token: 'The identity provider did not give a token for this gateway.',
		identity: 'The identity provider signed you in, but this gateway does not know you (ask its operator to add you to its policy).',
		busy: 'Too many sessions are open: try again later.',
	};

	async function providers() {
		const list = $('providers');
		if (list.childNodes.length) return;
		try {
			const r = await fetch('api/login/providers', { credentials: 'same-origin' });
			const j = await r.json();
			for (const p of j.providers || [])
				list.append(el('li', {}, el('a', { class: 'button', href: 'api/login?idp=' + p.id,
					text: 'Sign in with ' + p.issuer })));
		} catch (e) { /* none: the token form alone */ }
	}

	function signedOut(why) {
		me = null;
		if (events) events.close();
		events = null;
		show('signin');
		const reason = location.hash.startsWith('#/signin/') ? location.hash.slice(9) : '';
		const failed = Object.hasOwn(LOGIN_FAILED, reason) ? LOGIN_FAILED[reason] : null;
		if (failed) history.replaceState(null, '', location.pathname);
		say(failed || why || '', !!(failed || why));
		providers();
		$('token').focus();
	}

	function listRows(tickets) {
		const body = $('list-table').querySelector('tbody');
		body.replaceChildren();
		const mine = tickets.filter((t) => t.state === 'pending').reverse();
		$('list-count').textContent = mine.length === 0 ? 'Nothing waits for you.'
			: mine.length + (mine.length === 1 ? ' ticket waits.' : ' tickets wait.');
		for (const t of mine) {
			const info = t.tool_info;
			const owner = info && (info.owner_team || info.owner_contact);
			const link = el('td', {}, el('a', { href: '#/ticket/' + t.id, text: t.tool }),
				owner ? el('div', { class: 'help', text: 'owner: ' + owner }) : null);
			const who = t.principal === me.principal ? t.principal + ' (you)' : t.principal;
			const r = risk(t.tool_info);
			if (t.anomalies) r.append(el('span', { class: 'warn', text: ' — anomalies' }));
			body.append(el('tr', {}, link, el('td', { text: who }), el('td', {}, r),
				el('td', { text: ago(t.created), title: local(t.created) }),
				el('td', { text: left(t.expires), title: local(t.expires) })));
		}
	}

	function listen() {
		if (events || !me) return;
		events = new EventSource('api/events');
		events.addEventListener('open', () => { pause = 0; });
		events.addEventListener('tickets', (e) => {
			let doc = {};
			try { doc = JSON.parse(e.data); } catch (x) { return; }
			if (doc.tickets) listRows(doc.tickets);
			else loadList();
			if (shown && !$('ticket').hidden) loadTicket(shown, true);
		});
		events.onerror = async () => {
			/* refused (signed out, too many lists open, the server
			 * stopping): ask who we are, and if still signed in listen
			 * again after a pause that doubles, up to a minute, never
			 * at once (a refused stream asked again at once is a loop
			 * of requests) */
			if (!events || events.readyState !== EventSource.CLOSED) return;
			events = null;
			let r = null;
			try { r = await api('GET', 'session'); } catch (e) { /* unreachable */ }
			if (r && r.status !== 200) return signedOut();
			pause = Math.min(pause ? pause * 2 : 2, 60);
			say('The live list is not available now: it is asked for again in ' + pause + ' s.', true);
			setTimeout(listen, pause * 1000);
		};
	}

	async function loadList() {
		const r = await api('GET', 'tickets');
		if (r.status === 200) listRows(r.body.tickets || []);
		else say(r.body.error ? r.body.error.message : 'The list could not be read.', true);
	}

	/* ---- a ticket ---- */

	/* A JSON value pretty-printed, strings longer than FOLD folded. */
	function folded(value) {
		let folds = 0;
		const text = JSON.stringify(value, (k, v) => {
			if (typeof v === 'string' && v.length > FOLD) {
				folds++;
				return v.slice(0, FOLD) + '… [' + (v.length - FOLD) + ' more characters]';
			}
			return v;
		}, 2);
		return { text, folds };
	}

	function argumentsBox(t) {
		const value = t.arguments_display !== undefined ? t.arguments_display : t.arguments;
		const box = el('div');
		if (typeof value === 'string') {
			/* what JSON.parse would change (a number past a double's digits:
			 * docs/SCHEMA.md, "Numbers"): the arguments as sent */
			box.append(el('pre', { class: 'mono', 'aria-label': 'Arguments', text: value }),
				el('p', { class: 'warn', text: 'These arguments are shown as sent, as the tool gets them: a number in them has more digits than JavaScript keeps, or a name in them cannot be read here.' }));
			if (t.arguments_display !== undefined)
				box.append(el('p', { class: 'warn', text: 'The arguments hold characters a screen does not show as they are: they are written here as \\u escapes.' }));
			return box;
		}
		const f = folded(value);
		const pre = el('pre', { class: 'mono', 'aria-label': 'Arguments', text: f.text });
		box.append(pre);
		if (f.folds) {
			const full = JSON.stringify(value, null, 2);
			const b = el('button', { type: 'button', class: 'secondary',
				text: 'Show the ' + f.folds + ' long value' + (f.folds > 1 ? 's' : '') + ' in full' });
			b.addEventListener('click', () => { pre.textContent = full; b.remove(); });
			box.append(b);
		}
		if (t.arguments_display !== undefined)
			box.append(el('p', { class: 'warn', text: 'The arguments hold characters a screen does not show as they are: they are written here as \\u escapes.' }));
		return box;
	}

	function diffBox(text) {
		const pre = el('pre', { class: 'diff mono' });
		for (const line of String(text).split('\n')) {
			const cls = line.startsWith('+++') || line.startsWith('---') ? ''
				: line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del'
					: line.startsWith('@@') ? 'hunk' : '';
			pre.append(el('span', { class: cls, text: line || ' ' }));
		}
		return pre;
	}

	function rowsTable(sample) {
		const box = el('div');
		for (const s of sample) {
			const cols = s.columns || [];
			const head = el('tr', {}, el('th', { scope: 'col', text: '' }), ...cols.map((c) => el('th', { scope: 'col', text: c })));
			const rows = [];
			for (const [name, vals] of [['before', s.before], ['after', s.after]])
				if (Array.isArray(vals))
					rows.push(el('tr', {}, el('th', { scope: 'row', text: name }), ...vals.map((v) => el('td', { class: 'mono', text: typeof v === 'string' ? v : JSON.stringify(v) }))));
			box.append(el('table', {}, el('caption', { text: s.op + ' on ' + s.table }), el('thead', {}, head), el('tbody', {}, ...rows)));
		}
		return box;
	}

	/* A dry run's preview for a person: SQL rows as tables, file changes as
	 * diffs, a plan's steps in order; anything else as JSON. */
	function previewBox(p) {
		if (p === null || p === undefined) return el('p', { text: 'No preview.' });
		/* an upstream tool's definition changed (docs/UPSTREAMS.md, "Pins"):
		 * the report, then the accepted and the new definitions side by side */
		if (typeof p === 'object' && p.structured && typeof p.structured.change === 'string') {
			const c = p.structured;
			const box = el('div', {}, el('p', { class: c.breaking ? 'bad' : '', text: 'The server\'s definition of this tool ' + (c.change === 'added' ? 'is new' : 'changed') + (c.breaking ? ': a breaking change.' : '.') }));
			if (Array.isArray(p.content)) box.append(el('pre', { class: 'mono', text: p.content.filter((x) => x && x.type === 'text').map((x) => x.text).join('\n') }));
			if (Array.isArray(c.findings) && c.findings.length) box.append(findingsBox(c.findings));
			if (c.new !== undefined)
				box.append(el('div', { class: 'side' },
					el('section', { 'aria-label': 'Accepted definition' }, el('h3', { text: 'Accepted definition' }), el('pre', { class: 'mono', text: c.old === null || c.old === undefined ? '(none: a new tool)' : JSON.stringify(c.old, null, 2) })),
					el('section', { 'aria-label': 'New definition' }, el('h3', { text: 'New definition' }), el('pre', { class: 'mono', text: JSON.stringify(c.new, null, 2) }))));
			return box;
		}
		/* a tool's result: what it said (structured, else its JSON text) */
		if (typeof p === 'object' && !Array.isArray(p) && (p.structured !== undefined || p.structuredContent !== undefined || Array.isArray(p.content))) {
			const inner = p.structured !== undefined ? p.structured : p.structuredContent !== undefined ? p.structuredContent : resultText(p.content);
			const box = el('div', {}, previewBox(inner));
			if (p.isError) box.prepend(el('p', { class: 'bad', text: 'The dry run failed:' }));
			return box;
		}
		if (typeof p !== 'object') return el('pre', { class: 'mono', text: String(p) });
		const box = el('div');
		if (typeof p.statement === 'string') box.append(el('pre', { class: 'mono', text: p.statement }));
		if (typeof p.rows_changed === 'number') box.append(el('p', { text: p.rows_changed + ' row(s) would change in ' + (p.tables || []).join(', ') + '.' }));
		if (Array.isArray(p.sample)) box.append(rowsTable(p.sample));
		if (typeof p.path === 'string' && typeof p.op === 'string')
			box.append(el('p', { text: p.op + ' ' + p.path + ' (' + (p.bytes_before || 0) + ' → ' + (p.bytes_after || 0) + ' bytes)' }));
		if (typeof p.diff === 'string') box.append(diffBox(p.diff));
		if (Array.isArray(p.changes))
			for (const c of p.changes) {
				box.append(el('h3', { text: (c.op || 'change') + ' ' + (c.path || '') }));
				if (typeof c.diff === 'string') box.append(diffBox(c.diff));
			}
		if (Array.isArray(p.steps)) {
			const ol = el('ol');
			for (const s of p.steps) {
				const li = el('li', {}, el('strong', { text: (s.tool || '?') + (s.version ? '@' + s.version : '') }));
				if (s.held) li.append(el('span', { class: 'warn', text: ' — held for its anomalies' }));
				const inner = s.preview !== undefined ? s.preview : s.result;
				if (inner !== undefined) li.append(previewBox(inner));
				ol.append(li);
			}
			box.append(ol);
		}
		if (!box.childNodes.length) box.append(el('pre', { class: 'mono', text: folded(p).text }));
		return box;
	}

	/* The text of a tool result's content, parsed when it is JSON. */
	function resultText(content) {
		const text = content.filter((c) => c && c.type === 'text').map((c) => c.text).join('\n');
		try { return JSON.parse(text); } catch (e) { return text; }
	}

	function findingsBox(list) {
		const box = el('div');
		for (const f of list)
			box.append(el('div', { class: 'finding' }, el('strong', { text: f.rule || 'finding' }),
				' at ', el('code', { text: f.at || '/' }), ': ', f.why || ''));
		return box;
	}

	function ticketView(t) {
		const info = t.tool_info;
		const dl = el('dl', {},
			el('dt', { text: 'Tool' }), el('dd', {}, el('strong', { text: t.tool }), info && info.title ? ' — ' + info.title : ''),
			el('dt', { text: 'What it does' }), el('dd', { text: info ? info.description || '' : '' }),
			el('dt', { text: 'Owner' }), el('dd', { text: info ? [info.owner_team, info.owner_contact].filter(Boolean).join(', ') : '' }),
			el('dt', { text: 'Risk' }), el('dd', {}, risk(info)),
			el('dt', { text: 'Asked by' }), el('dd', { text: t.principal }),
			el('dt', { text: 'Asked' }), el('dd', { text: local(t.created) + ' (' + ago(t.created) + ')' }),
			el('dt', { text: 'State' }), el('dd', { id: 'ticket-state', class: t.state === 'pending' ? 'warn' : t.state === 'rejected' ? 'bad' : 'good', text: t.state }));
		if (t.state === 'pending') dl.append(el('dt', { text: 'Expires' }), el('dd', { text: local(t.expires) + ' (' + left(t.expires) + ')' }));
		if (t.approver) dl.append(el('dt', { text: 'Decided by' }), el('dd', { text: t.approver + (t.decided ? ', ' + local(t.decided) : '') }));
		if (t.reason) dl.append(el('dt', { text: 'Reason' }), el('dd', { text: t.reason }));
		const body = el('div', {}, dl);
		if (t.anomalies) body.append(el('h2', { text: 'Anomalies' }), findingsBox(Array.isArray(t.anomalies) ? t.anomalies : [{ why: String(t.anomalies) }]));
		body.append(el('h2', { text: 'Arguments' }), argumentsBox(t),
			el('p', {}, 'SHA-256 of the arguments: ', el('code', { text: t.args_sha256 })));
		body.append(el('h2', { text: 'What it would do (dry run)' }),
			previewBox(t.preview_display !== undefined ? t.preview_display : t.preview));
		if (t.state === 'executed' && info && info.compensation) {
			const b = el('button', { type: 'button', class: 'danger', id: 'rollback', text: 'Roll back this call' });
			b.addEventListener('click', () => rollback(t));
			body.append(el('h2', { text: 'Undo' }), el('p', { text: 'Runs ' + info.compensation + ', as toolgate rollback does.' }), b);
		}
		return body;
	}

	async function loadTicket(id, quiet) {
		shown = id;
		const r = await api('GET', 'tickets/' + encodeURIComponent(id));
		/* another ticket was asked for meanwhile: this answer is stale */
		if (shown !== id) return;
		if (r.status !== 200) {
			say(r.body.error ? r.body.error.message : 'No such ticket.', true);
			return;
		}
		const t = r.body;
		$('ticket-title').textContent = 'Ticket ' + t.id.slice(0, 8) + ' — ' + t.tool;
		$('ticket-body').replaceChildren(ticketView(t));
		const mine = t.principal === me.principal;
		$('decide').hidden = t.state !== 'pending';
		$('approve').disabled = mine;
		$('reject').disabled = mine;
		$('approve').title = mine ? 'You asked for this call: another approver decides it.' : '';
		$('cancel-box').hidden = !(mine && t.state === 'pending');
		if (!quiet) show('ticket');
	}

	async function decide(verb, body) {
		const r = await api('POST', 'tickets/' + shown + '/' + verb, body);
		if (r.status === 200) say('Done: the ticket is ' + (r.body.state || verb) + '.');
		else say(r.body.error ? r.body.error.message : 'Refused (' + r.status + ').', true);
		await loadTicket(shown, true);
	}

	async function rollback(t) {
		if (!window.confirm('Roll back ' + t.tool + ' (call ' + t.id.slice(0, 8) + ')? This runs its compensation now.')) return;
		const r = await api('POST', 'calls/' + t.id + '/rollback', { dry_run: false });
		say(r.status === 200 ? 'Rolled back.' : (r.body.error ? r.body.error.message : 'Refused (' + r.status + ').'), r.status !== 200);
		await loadTicket(t.id, true);
	}

	/* ---- history ---- */

	let everything = [];

	function historyRows() {
		const tool = $('f-tool').value.trim(), who = $('f-principal').value.trim(), state = $('f-state').value;
		const body = $('history-table').querySelector('tbody');
		body.replaceChildren();
		for (const t of everything.slice().reverse()) {
			if ((tool && !t.tool.includes(tool)) || (who && !t.principal.includes(who)) || (state && t.state !== state)) continue;
			body.append(el('tr', {}, el('td', {}, el('a', { href: '#/ticket/' + t.id, text: t.tool })),
				el('td', { text: t.principal }), el('td', { text: t.state }), el('td', { text: t.approver || '' }),
				el('td', { text: local(t.created) })));
		}
	}

	async function loadHistory() {
		const r = await api('GET', 'tickets?state=all');
		if (r.status === 200) everything = r.body.tickets || [];
		historyRows();
	}

	/* ---- routing and sign-in ---- */

	async function route() {
		say('');
		if (!me) return;
		const h = location.hash;
		try {
			if (h.startsWith('#/ticket/')) await loadTicket(h.slice(9));
			else if (h === '#/history') { show('history'); await loadHistory(); }
			else { shown = null; show('list'); await loadList(); }
		} catch (e) {
			if (!(e instanceof Unauthorized)) say('The gateway could not be reached.', true);
		}
	}

	async function whoami() {
		const r = await api('GET', 'session');
		if (r.status !== 200) return signedOut();
		me = r.body;
		$('who').textContent = me.principal;
		listen();
		route();
	}

	$('signin-form').addEventListener('submit', async (e) => {
		e.preventDefault();
		const r = await api('POST', 'session', { token: $('token').value.trim() });
		$('token').value = '';
		if (r.status !== 200) return say(r.body.error ? r.body.error.message : 'Sign-in refused.', true);
		me = r.body;
		$('who').textContent = me.principal;
		listen();
		route();
	});
	$('signout').addEventListener('click', async () => {
		try { await api('DELETE', 'session'); } catch (e) { /* signed out anyway */ }
		signedOut('Signed out.');
	});
	$('approve').addEventListener('click', () => decide('approve', {}));
	$('reject-form').addEventListener('submit', (e) => {
		e.preventDefault();
		const reason = $('reason').value.trim();
		if (!reason) return say('A rejection needs a reason.', true);
		$('reason').value = '';
		decide('reject', { reason });
	});
	$('cancel').addEventListener('click', () => decide('cancel', {}));
	for (const id of ['f-tool', 'f-principal', 'f-state']) $(id).addEventListener('input', historyRows);
	$('filter').addEventListener('submit', (e) => e.preventDefault());
	window.addEventListener('hashchange', route);
	whoami().catch(() => signedOut());
})();
