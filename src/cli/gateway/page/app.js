// The gateway's page: the list of sessions, one session's event stream drawn as a chat,
// and the prompt. What a model or a tool wrote goes into the page as text; the one
// exception is the `html` of `text` events, which the server rendered and sanitized.
// The API and the events are described in the gateway's spec (gateway_spec.md).
'use strict';

(() => {
  const kRefreshMs = 5000;
  const kMaxShown = 100000;  // characters of one tool input or result put on the page
  const kLineChars = 120;    // characters of a result's first line shown in its summary
  const kAsks = {             // what an approval's action asks, in words
    permission: 'wants to run',
    send: 'wants to send data out with',
    state_change: 'wants to change state with',
  };

  const $ = (id) => document.getElementById(id);
  const ui = {
    sessions: $('sessions'), newSession: $('new-session'), title: $('title'),
    sessionId: $('session-id'), untrusted: $('session-untrusted'), status: $('status'),
    cost: $('cost'), messages: $('messages'), composer: $('composer'), prompt: $('prompt'),
    send: $('send'), cancel: $('cancel'),
  };
  const csrf = (document.querySelector('meta[name="mecha-csrf"]') || {}).content || '';

  // ---- small helpers

  // Any value as display text: fields may be missing or of another type than promised.
  function str(v) {
    if (typeof v === 'string') return v;
    if (v == null) return '';
    if (typeof v === 'object') {
      try { return JSON.stringify(v, null, 2); } catch (_) { return ''; }
    }
    return String(v);
  }
  const num = (v) => typeof v === 'number' && Number.isFinite(v);

  function h(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function clip(s, max) {
    return s.length <= max ? s : `${s.slice(0, max)}\n… (${s.length - max} more characters)`;
  }

  function firstLine(s, max) {
    const line = s.trim().split('\n', 1)[0] || '';
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  }

  function bytes(s) {
    const n = new TextEncoder().encode(s).length;
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
    return `${(n / 1024 / 1024).toFixed(1)} MB`;
  }

  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  function tokens(n) {
    if (!num(n)) return '0';
    if (n < 1000) return String(n);
    if (n < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)}k`;
    return `${(n / 1e6).toFixed(1)}M`;
  }

  function dollars(v, digits) { return `$${v.toFixed(digits)}`; }

  function duration(s) {
    if (s < 120) return `${Math.round(s)} s`;
    if (s < 7200) return `${Math.round(s / 60)} min`;
    return `${(s / 3600).toFixed(1)} h`;
  }

  function relativeTime(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return '';
    const s = (Date.now() - t) / 1000;
    if (s < 45) return 'just now';
    if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    if (s < 7 * 86400) return `${Math.round(s / 86400)} d ago`;
    const d = new Date(t);
    const opts = {month: 'short', day: 'numeric'};
    if (d.getFullYear() !== new Date().getFullYear()) opts.year = 'numeric';
    return d.toLocaleDateString(undefined, opts);
  }

  // ---- the API: every call answers {ok, data} or {ok: false, error}, never throws

  async function api(method, path, body) {
    const init = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}};
    if (method === 'POST') {
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-CSRF-Token'] = csrf;
      init.body = JSON.stringify(body || {});
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      const why = (e && e.message) || 'network error';
      return {ok: false, error: `cannot reach the gateway (${method} ${path}: ${why})`};
    }
    let data = null;
    try { data = await res.json(); } catch (_) { /* an empty or non-JSON body */ }
    if (!res.ok) {
      const said = data && typeof data.error === 'string' && data.error;
      return {ok: false, error: said || `${method} ${path}: HTTP ${res.status}`};
    }
    return {ok: true, data: data && typeof data === 'object' ? data : {}};
  }

  const sessionPath = (id, tail) => `/api/sessions/${encodeURIComponent(id)}/${tail}`;

  // ---- state

  const state = {
    id: null,          // the attached session
    es: null,          // its EventSource
    opening: 0,        // bumped by each open, so a late answer for an earlier click is dropped
    running: false,    // a turn runs in the attached session
    sending: false,    // a turn's POST is on its way
    daemon: '',        // the gateway's link to the daemon: '', 'connected', 'reconnecting'
    streamOk: true,    // false while the EventSource reconnects
    titles: new Map(), // session id -> title, from the last list
    listBusy: false,
    listAgain: false,
    listFailed: false,
  };

  // What one attachment has drawn; thrown away on the next attach.
  function freshView() {
    return {
      calls: new Map(),       // call id -> parts of its <details>
      texts: new Map(),       // text key -> bubble
      pending: new Map(),     // agent -> bubble collecting deltas
      agentParent: new Map(), // agent -> the call it last worked under (deltas carry none)
      approvals: new Map(),   // request id -> card
      turn: [],               // bubbles of the current turn
      turnsDone: 0,
    };
  }
  let view = freshView();

  // ---- scrolling: follow new events while the reader is at the bottom

  let stick = true;
  let scrollQueued = false;
  ui.messages.addEventListener('scroll', () => {
    const m = ui.messages;
    stick = m.scrollHeight - m.scrollTop - m.clientHeight < 48;
  });
  function follow() {
    if (!stick || scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => {
      scrollQueued = false;
      ui.messages.scrollTop = ui.messages.scrollHeight;
    });
  }

  function errorLine(text) {
    ui.messages.append(h('div', 'error-line', text));
    follow();
  }

  // ---- header

  function showStatus() {
    const bad = !state.streamOk || state.daemon === 'reconnecting';
    ui.status.textContent = bad ? 'reconnecting' : state.daemon;
    ui.status.classList.toggle('bad', bad);
    ui.status.classList.toggle('good', !bad && state.daemon === 'connected');
  }

  function showTitle() {
    if (!state.id) return;
    ui.title.textContent = state.titles.get(state.id) || '(untitled)';
    ui.sessionId.textContent = state.id;
  }

  function setRunning(on) {
    state.running = on;
    ui.send.disabled = on || state.sending;
    ui.cancel.disabled = !on;
    ui.composer.classList.toggle('running', on);
  }

  // ---- chat elements

  // Where an event of `parent` goes: the chat, or the nested part of the call it belongs to.
  function containerFor(parent) {
    if (parent == null || parent === '') return ui.messages;
    return callFor(str(parent), null).nested;
  }

  function makeCall(id) {
    const details = h('details', 'tool');
    details.dataset.id = id;
    const summary = h('summary');
    const label = h('span', 'tool-label');
    const line = h('span', 'tool-line');
    summary.append(label, line);
    const body = h('div', 'tool-body');
    const input = h('pre', 'tool-input');
    const nested = h('div', 'nested');
    const output = h('pre', 'tool-output');
    input.hidden = true;
    output.hidden = true;
    body.append(input, nested, output);
    details.append(summary, body);
    const call = {details, summary, label, line, input, nested, output, name: '', done: false};
    view.calls.set(id, call);
    return call;
  }

  // The call `id`, or a placeholder for it under `parent` when it has not been seen yet.
  function callFor(id, parent) {
    let call = view.calls.get(id);
    if (!call) {
      call = makeCall(id);
      call.details.classList.add('placeholder');
      call.label.textContent = `call ${id}`;
      place(call, parent);
    }
    return call;
  }

  // Moves a call under `parent`, unless that would put it inside itself.
  function place(call, parent) {
    const target = parent == null || parent === '' ? ui.messages : containerFor(parent);
    if (call.details.parentNode === target || call.details.contains(target)) {
      if (!call.details.parentNode) ui.messages.append(call.details);
      return;
    }
    target.append(call.details);
  }

  // Deltas name no parent: they go where their agent was last seen working.
  function learnAgent(ev) {
    if (!('parent' in ev)) return;
    view.agentParent.set(str(ev.agent), ev.parent == null ? null : str(ev.parent));
  }

  function bubble(agent, parent) {
    const el = h('div', 'msg assistant');
    const head = h('div', 'msg-head');
    if (parent != null && parent !== '' && agent) head.append(h('span', 'agent', agent));
    const md = h('div', 'md');
    el.append(head, md);
    return {el, head, md, badge: null};
  }

  function markUntrusted(b, on) {
    b.el.classList.toggle('untrusted', on);
    if (on && !b.badge) {
      b.badge = h('span', 'badge untrusted-label', 'untrusted');
      b.badge.title = 'This turn read content that is not trusted';
      b.head.append(b.badge);
    } else if (!on && b.badge) {
      b.badge.remove();
      b.badge = null;
    }
  }

  // Links in rendered text open in a new tab: following one in place would drop the chat.
  function fixLinks(root) {
    for (const a of root.querySelectorAll('a[href]')) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
    }
  }

  // Deltas that no text event replaced stay as they are, but stop looking live.
  function settlePending() {
    for (const b of view.pending.values()) b.el.classList.remove('pending');
    view.pending.clear();
  }

  // The summary's short result: like the terminal's, an error's first line, Bash's first
  // line of output, and for other tools their size.
  function resultLine(call, content, isError) {
    if (call.refused) return 'refused';
    if (isError) return `error: ${firstLine(content, kLineChars) || '(no message)'}`;
    const text = content.replace(/\s+$/, '');
    if (!text) return '(no output)';
    const lines = text.split('\n').length;
    if (call.name === 'Bash') {
      const more = lines > 1 ? ` … +${plural(lines - 1, 'line', 'lines')}` : '';
      return `${firstLine(text, kLineChars)}${more}`;
    }
    return `${plural(lines, 'line', 'lines')} (${bytes(content)})`;
  }

  // "⎿ text". The corner is drawn by CSS too: few fonts have the glyph, which stays in the
  // text for copying and finding.
  function setLine(target, text) {
    target.replaceChildren(h('span', 'elbow', '⎿'), ` ${text}`);
  }

  function settleApproval(card, approved, always) {
    if (card.classList.contains('settled')) return;
    card.classList.add('settled', approved ? 'approved' : 'denied');
    const actions = card.querySelector('.approval-actions');
    if (actions) actions.remove();
    const word = approved ? (always ? 'approved (always)' : 'approved') : 'denied';
    card.querySelector('.approval-result').textContent = word;
  }

  // ---- events of the stream, by type; unknown types are ignored

  const handlers = new Map(Object.entries({
    status(ev) {
      state.daemon = ev.state === 'reconnecting' ? 'reconnecting' : 'connected';
      showStatus();
    },

    opened(ev) {
      ui.untrusted.hidden = !ev.untrusted;
    },

    user(ev) {
      settlePending();
      view.turn = [];
      const m = h('div', 'msg user');
      m.append(h('div', 'body', str(ev.text)));
      ui.messages.append(m);
      if (!ev.past) setRunning(true);
    },

    delta(ev) {
      const agent = str(ev.agent);
      let b = view.pending.get(agent);
      if (!b) {
        const parent = 'parent' in ev ? ev.parent : view.agentParent.get(agent);
        b = bubble(agent, parent);
        b.el.classList.add('pending');
        b.textNode = document.createTextNode('');
        b.md.classList.add('plain');
        b.md.append(b.textNode);
        containerFor(parent).append(b.el);
        view.pending.set(agent, b);
      }
      b.textNode.data += str(ev.text);
    },

    text(ev) {
      const agent = str(ev.agent);
      const key = str(ev.key);
      learnAgent(ev);
      let b = key ? view.texts.get(key) : null;
      if (!b) {
        const pending = view.pending.get(agent);
        view.pending.delete(agent);
        const target = containerFor(ev.parent);
        if (pending && pending.el.parentNode === target) {
          b = pending;
          b.el.classList.remove('pending');
        } else {
          if (pending) pending.el.remove();
          b = bubble(agent, ev.parent);
          target.append(b.el);
        }
        if (key) {
          view.texts.set(key, b);
          b.el.dataset.key = key;
        }
        view.turn.push(b);
      }
      b.md.classList.remove('plain');
      b.md.innerHTML = str(ev.html);  // rendered and sanitized by the server
      fixLinks(b.md);
      markUntrusted(b, !!ev.untrusted);
    },

    tool_call(ev) {
      learnAgent(ev);
      const id = str(ev.id);
      const call = view.calls.get(id) || makeCall(id);
      call.details.classList.remove('placeholder');
      call.name = str(ev.name);
      call.label.textContent = str(ev.label) || call.name || 'tool';
      const input = str(ev.input);
      call.input.textContent = clip(input, kMaxShown);
      call.input.hidden = !input;
      if (!call.done) call.details.classList.add('running');
      place(call, ev.parent);
    },

    tool_result(ev) {
      const call = callFor(str(ev.id), ev.parent);
      const content = str(ev.content);
      call.done = true;
      call.details.classList.remove('running');
      call.output.textContent = clip(content, kMaxShown);
      call.output.hidden = !content;
      call.summary.classList.toggle('error', !!ev.is_error);
      setLine(call.line, resultLine(call, content, !!ev.is_error));
      if (ev.untrusted && !call.summary.querySelector('.untrusted-label')) {
        call.summary.append(h('span', 'badge untrusted-label', 'untrusted'));
      }
    },

    refusal(ev) {
      learnAgent(ev);
      const r = h('div', 'refusal');
      const rule = h('span', 'refusal-rule');
      setLine(rule, `refused by rule '${str(ev.rule) || '?'}'`);
      r.append(rule);
      const msg = str(ev.message);
      if (msg) r.append(h('span', 'refusal-message', msg));
      const call = view.calls.get(str(ev.id));
      if (call) {
        call.refused = true;
        call.done = true;
        call.details.classList.remove('running');
        call.summary.classList.add('refused');
        setLine(call.line, 'refused');
        call.details.after(r);
      } else {
        containerFor(ev.parent).append(r);
      }
      // A refusal is never folded away: open the calls it sits in.
      for (let d = r.parentElement && r.parentElement.closest('details'); d;
           d = d.parentElement && d.parentElement.closest('details')) {
        d.open = true;
      }
    },

    note(ev) {
      learnAgent(ev);
      containerFor(ev.parent).append(h('div', 'note', str(ev.text)));
    },

    approval(ev) {
      const rid = str(ev.request_id);
      if (view.approvals.has(rid)) return;
      const action = str(ev.action);
      const card = h('div', 'approval');
      card.dataset.requestId = rid;
      const head = h('div', 'approval-head');
      head.append(h('span', 'approval-title', 'Approval needed'));
      const who = str(ev.agent) || 'the agent';
      const ask = h('span', 'approval-ask', `${who} ${kAsks[action] || 'wants to use'} `);
      ask.append(h('code', 'approval-tool', str(ev.tool) || '?'));
      if (!kAsks[action] && action) ask.append(` (${action})`);
      head.append(ask);
      card.append(head);
      const reason = str(ev.reason);
      if (reason) card.append(h('div', 'approval-reason', reason));
      const input = str(ev.input);
      if (input) card.append(h('pre', 'approval-input', clip(input, kMaxShown)));
      const actions = h('div', 'approval-actions');
      actions.append(h('button', 'approve', 'Approve'));
      if (action === 'permission') actions.append(h('button', 'always', 'Always allow'));
      actions.append(h('button', 'deny', 'Deny'));
      for (const b of actions.children) b.type = 'button';
      if (num(ev.timeout_ms) && ev.timeout_ms > 0) {
        actions.append(h('span', 'approval-timeout',
                         `times out after ${duration(ev.timeout_ms / 1000)}`));
      }
      card.append(actions, h('div', 'approval-result'));
      view.approvals.set(rid, card);
      ui.messages.append(card);
      stick = true;  // a question for the reader is brought into view even if they scrolled up
    },

    approval_done(ev) {
      const card = view.approvals.get(str(ev.request_id));
      if (card) settleApproval(card, !!ev.approved, false);
    },

    turn_done(ev) {
      settlePending();
      for (const call of view.calls.values()) call.details.classList.remove('running');
      if (ev.untrusted) for (const b of view.turn) markUntrusted(b, true);
      view.turnsDone++;
      setRunning(false);
      refreshSessions();
    },

    cost(ev) {
      const budget = ev.budget && typeof ev.budget === 'object' ? ev.budget : {};
      const usage = ev.usage && typeof ev.usage === 'object' ? ev.usage : {};
      let money = num(ev.cost_usd) ? dollars(ev.cost_usd, ev.cost_usd < 10 ? 4 : 2) : 'cost unknown';
      if (num(budget.max_cost_usd)) money += ` of ${dollars(budget.max_cost_usd, 2)} per turn`;
      const parts = [money];
      if (num(ev.unpriced_calls) && ev.unpriced_calls > 0) {
        parts.push(`${plural(ev.unpriced_calls, 'call', 'calls')} unpriced`);
      }
      parts.push(`${tokens(usage.input_tokens)} in / ${tokens(usage.output_tokens)} out`);
      if (num(budget.max_turns)) parts.push(`max ${budget.max_turns} model calls per turn`);
      if (num(budget.max_time_s)) parts.push(`max ${duration(budget.max_time_s)} per turn`);
      ui.cost.textContent = parts.join(' · ');
      ui.cost.title = `${ui.cost.textContent}\ntokens: ${usage.input_tokens || 0} in, ` +
          `${usage.output_tokens || 0} out, ${usage.cache_read_tokens || 0} cache read, ` +
          `${usage.cache_write_tokens || 0} cache write`;
    },

    error(ev) {
      const code = str(ev.code);
      const message = str(ev.message) || 'unknown error';
      errorLine(code ? `${code}: ${message}` : message);
    },

    history_done() {
      if (ui.messages.childElementCount > 0) {
        ui.messages.append(h('div', 'divider', 'earlier turns above'));
      }
    },

    truncated(ev) {
      const n = num(ev.missed) ? ev.missed : 0;
      ui.messages.append(h('div', 'note', `${plural(n, 'earlier event', 'earlier events')} ` +
                                          'no longer held by the gateway'));
    },
  }));

  function onEvent(data) {
    let ev;
    try { ev = JSON.parse(data); } catch (_) { return; }
    if (!ev || typeof ev !== 'object') return;
    const handle = handlers.get(ev.type);
    if (!handle) return;
    try {
      handle(ev);
    } catch (e) {
      errorLine(`could not show a ${ev.type} event: ${(e && e.message) || e}`);
    }
    follow();
  }

  // ---- attaching to a session

  function attach(id) {
    if (state.es) state.es.close();
    state.id = id;
    view = freshView();
    ui.messages.replaceChildren();
    ui.messages.classList.add('attached');
    ui.cost.textContent = '';
    ui.cost.title = '';
    ui.untrusted.hidden = true;
    stick = true;
    setRunning(false);
    history.replaceState(null, '', `#s=${encodeURIComponent(id)}`);
    for (const li of ui.sessions.querySelectorAll('.session')) {
      li.classList.toggle('active', li.dataset.id === id);
    }
    showTitle();

    const es = new EventSource(sessionPath(id, 'events'));
    state.es = es;
    state.streamOk = true;
    es.onmessage = (m) => { if (state.es === es) onEvent(m.data); };
    es.onopen = () => {
      if (state.es !== es) return;
      state.streamOk = true;
      showStatus();
    };
    es.onerror = () => {
      if (state.es !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        state.es = null;
        state.streamOk = true;
        errorLine('The event stream of this session ended; pick the session again to reopen it.');
      } else {
        state.streamOk = false;  // EventSource retries by itself, resuming after the last id
      }
      showStatus();
    };
    ui.prompt.focus();
  }

  async function openSession(id) {
    const mine = ++state.opening;
    const r = await api('POST', sessionPath(id, 'open'), {});
    if (mine !== state.opening) return false;
    if (!r.ok) {
      errorLine(`Could not open session ${id}: ${r.error}`);
      return false;
    }
    attach(str(r.data.id) || id);
    return true;
  }

  async function newSession() {
    const mine = ++state.opening;
    const r = await api('POST', '/api/sessions', {});
    if (mine !== state.opening) return false;
    const id = r.ok ? str(r.data.id) : '';
    if (!id) {
      errorLine(`Could not start a session: ${r.ok ? 'the answer has no id' : r.error}`);
      return false;
    }
    attach(id);
    refreshSessions();
    return true;
  }

  // ---- the session list

  function renderSessions(list) {
    const focused = document.activeElement && document.activeElement.closest &&
        document.activeElement.closest('.session');
    const focusedId = focused ? focused.dataset.id : null;
    const frag = document.createDocumentFragment();
    state.titles.clear();
    let refocus = null;
    for (const s of list) {
      if (!s || typeof s !== 'object') continue;
      const id = str(s.id);
      if (!id) continue;
      const title = str(s.title).trim();
      state.titles.set(id, title);
      const li = h('li', 'session');
      li.dataset.id = id;
      li.tabIndex = 0;
      li.setAttribute('role', 'button');
      li.classList.toggle('active', id === state.id);
      li.classList.toggle('attached', !!s.attached);
      const top = h('div', 'session-top');
      top.append(h('span', 'session-title', title || '(untitled)'));
      if (s.untrusted) top.append(h('span', 'badge badge-untrusted', 'untrusted'));
      const when = str(s.updated_at) || str(s.started_at);
      const meta = [relativeTime(when)];
      if (num(s.turns)) meta.push(plural(s.turns, 'turn', 'turns'));
      if (num(s.cost_usd)) meta.push(dollars(s.cost_usd, s.cost_usd < 1 ? 3 : 2));
      const line = h('div', 'session-meta', meta.filter(Boolean).join(' · '));
      const t = Date.parse(when);
      if (!Number.isNaN(t)) line.title = new Date(t).toLocaleString();
      li.append(top, line);
      frag.append(li);
      if (id === focusedId) refocus = li;
    }
    if (!frag.childElementCount) frag.append(h('li', 'sessions-empty', 'No sessions yet.'));
    ui.sessions.replaceChildren(frag);
    if (refocus) refocus.focus();
    showTitle();
  }

  // One request at a time; calls made meanwhile are folded into one more.
  async function refreshSessions() {
    if (state.listBusy) {
      state.listAgain = true;
      return;
    }
    state.listBusy = true;
    const r = await api('GET', '/api/sessions');
    state.listBusy = false;
    if (!r.ok) {
      // Said once, not every few seconds while the gateway is away.
      if (!state.listFailed) errorLine(`Could not list the sessions: ${r.error}`);
      state.listFailed = true;
    } else {
      state.listFailed = false;
      if (typeof r.data.daemon === 'string') {
        state.daemon = r.data.daemon === 'reconnecting' ? 'reconnecting' : 'connected';
        showStatus();
      }
      renderSessions(Array.isArray(r.data.sessions) ? r.data.sessions : []);
    }
    if (state.listAgain) {
      state.listAgain = false;
      refreshSessions();
    }
  }

  // ---- sending

  async function sendPrompt() {
    const text = ui.prompt.value;
    if (!text.trim() || state.running || state.sending) return;
    state.sending = true;
    ui.send.disabled = true;
    if (!state.id && !(await newSession())) {
      state.sending = false;
      setRunning(state.running);
      return;
    }
    const id = state.id;
    const doneBefore = view.turnsDone;
    const r = await api('POST', sessionPath(id, 'turn'), {text});
    state.sending = false;
    if (state.id !== id) return;
    if (!r.ok) {
      errorLine(r.error);
      setRunning(state.running);
      return;
    }
    ui.prompt.value = '';
    autosize();
    // The stream may already have told of this turn's end; then it does not run any more.
    setRunning(view.turnsDone === doneBefore ? true : state.running);
  }

  async function cancelTurn() {
    if (!state.id) return;
    const r = await api('POST', sessionPath(state.id, 'cancel'), {});
    if (!r.ok) errorLine(`Could not cancel: ${r.error}`);
  }

  async function answerApproval(card, approved, always) {
    const buttons = card.querySelectorAll('.approval-actions button');
    for (const b of buttons) b.disabled = true;
    const r = await api('POST', sessionPath(state.id, 'approval'),
                        {request_id: card.dataset.requestId, approved, always});
    if (!r.ok) {
      for (const b of buttons) b.disabled = false;
      errorLine(`Could not answer: ${r.error}`);
      return;
    }
    settleApproval(card, approved, always);
  }

  function autosize() {
    ui.prompt.style.height = 'auto';
    ui.prompt.style.height = `${Math.min(ui.prompt.scrollHeight, 240)}px`;
  }

  // ---- wiring

  ui.composer.addEventListener('submit', (e) => {
    e.preventDefault();
    sendPrompt();
  });
  ui.prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      sendPrompt();
    }
  });
  ui.prompt.addEventListener('input', autosize);
  ui.cancel.addEventListener('click', cancelTurn);
  ui.newSession.addEventListener('click', newSession);

  ui.sessions.addEventListener('click', (e) => {
    const li = e.target.closest('.session');
    if (li) openSession(li.dataset.id);
  });
  ui.sessions.addEventListener('keydown', (e) => {
    const li = e.target.closest('.session');
    if (li && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      openSession(li.dataset.id);
    }
  });

  ui.messages.addEventListener('click', (e) => {
    const button = e.target.closest('.approval-actions button');
    if (!button) return;
    const card = button.closest('.approval');
    if (button.classList.contains('approve')) answerApproval(card, true, false);
    else if (button.classList.contains('always')) answerApproval(card, true, true);
    else if (button.classList.contains('deny')) answerApproval(card, false, false);
  });

  function hashSession() {
    return new URLSearchParams(location.hash.slice(1)).get('s') || '';
  }
  window.addEventListener('hashchange', () => {
    const id = hashSession();
    if (id && id !== state.id) openSession(id);
  });

  const mac = /Mac|iPhone|iPad/.test(navigator.platform || '');
  ui.prompt.placeholder = `Message mecha (${mac ? '⌘' : 'Ctrl+'}Enter sends)`;

  refreshSessions();
  setInterval(refreshSessions, kRefreshMs);
  const start = hashSession();
  if (start) {
    openSession(start).then((ok) => {
      if (!ok && !state.id) history.replaceState(null, '', location.pathname);
    });
  }
})();
