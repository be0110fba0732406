/**
 * The dashboard page: one self-contained HTML document (styles and a small script inline, no
 * framework, no build step). It holds no data; it polls the JSON API under `<base>/api` with
 * the bearer token the user gives it (kept in this tab's session storage, or read once from
 * the URL fragment `#token=...`, which never reaches the server's logs).
 */
export function dashboardPage(base: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tasks · mcp-task-server</title>
<style>
  :root { --bg: #f6f7f9; --card: #fff; --ink: #1d2330; --muted: #667085; --line: #e4e7ec; --accent: #2f6fed;
          --working: #2f6fed; --input_required: #b54708; --completed: #067647; --failed: #b42318; --cancelled: #667085; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--ink); }
  header { display: flex; align-items: center; gap: 16px; padding: 12px 20px; background: var(--card); border-bottom: 1px solid var(--line); }
  header h1 { font-size: 16px; margin: 0; }
  header .who { margin-left: auto; color: var(--muted); }
  main { display: grid; grid-template-columns: minmax(420px, 1.3fr) minmax(360px, 1fr); gap: 16px; padding: 16px 20px; }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-width: 0; }
  .filters { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; flex-wrap: wrap; }
  select, input[type=text], input[type=number], input[type=password] { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 5px; }
  button { font: inherit; padding: 5px 12px; border-radius: 5px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: var(--accent); }
  button.danger { background: #fff; color: var(--failed); border-color: var(--failed); }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { color: var(--muted); font-weight: 500; font-size: 12px; }
  tbody tr { cursor: pointer; }
  tbody tr:hover, tbody tr.selected { background: #eef4ff; }
  .status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; color: #fff; background: var(--muted); white-space: nowrap; }
  .status.working { background: var(--working); } .status.input_required { background: var(--input_required); }
  .status.completed { background: var(--completed); } .status.failed { background: var(--failed); } .status.cancelled { background: var(--cancelled); }
  .bar { height: 6px; background: var(--line); border-radius: 3px; margin-top: 4px; overflow: hidden; }
  .bar > div { height: 100%; background: var(--accent); }
  .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
  .muted { color: var(--muted); }
  .timeline { list-style: none; padding: 0; margin: 8px 0; }
  .timeline li { padding: 4px 0 4px 12px; border-left: 2px solid var(--line); }
  .timeline li .kind { display: inline-block; min-width: 70px; color: var(--muted); font-size: 12px; }
  .question { border: 1px solid var(--input_required); border-radius: 6px; padding: 10px; margin: 10px 0; background: #fffaf5; }
  .question label { display: block; margin: 6px 0; }
  .field-help { color: var(--muted); font-size: 12px; }
  .error { color: var(--failed); }
  pre { white-space: pre-wrap; word-break: break-word; background: var(--bg); padding: 8px; border-radius: 5px; margin: 6px 0; }
  #login { max-width: 460px; margin: 60px auto; }
</style>
</head>
<body>
<header><h1>Tasks</h1><span class="muted">mcp-task-server</span><span class="who" id="who"></span></header>
<div id="login" hidden>
  <section>
    <p>This server wants the bearer token you use for <span class="mono">/mcp</span>.</p>
    <form id="login-form"><input type="password" id="token" placeholder="bearer token" size="36" autocomplete="off"> <button type="submit">Open</button></form>
    <p class="error" id="login-error"></p>
  </section>
</div>
<main id="app" hidden>
  <section>
    <div class="filters">
      <label>Status <select id="filter-status"><option value="">any</option></select></label>
      <label>Tool <select id="filter-tool"><option value="">any</option></select></label>
      <form id="open-form"><input type="text" id="open-id" placeholder="task id" size="24"> <button class="secondary" type="submit">Open</button></form>
    </div>
    <p class="muted" id="list-note"></p>
    <table><thead><tr><th>Status</th><th>Tool</th><th>Progress</th><th>TTL left</th><th>Created</th></tr></thead><tbody id="tasks"></tbody></table>
  </section>
  <section id="detail"><p class="muted">Select a task to see its timeline.</p></section>
</main>
<script>
(() => {
  const api = ${JSON.stringify(`${base}/api`)};
  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, children = []) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === 'class') node.className = value; else if (key === 'text') node.textContent = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value); else node.setAttribute(key, value);
    }
    for (const child of [].concat(children)) if (child) node.append(child);
    return node;
  };
  const fragmentToken = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fragmentToken) { sessionStorage.setItem('mcp-task-token', fragmentToken); history.replaceState(null, '', location.pathname + location.search); }
  const as = new URLSearchParams(location.search).get('as');
  let token = sessionStorage.getItem('mcp-task-token') || '';
  let selected = null;
  let filtersFilled = false;

  async function call(path, init = {}) {
    const url = new URL(api + path, location.href);
    if (as) url.searchParams.set('as', as);
    const headers = { ...(init.body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: 'Bearer ' + token } : {}) };
    const response = await fetch(url, { ...init, headers });
    if (response.status === 401) { showLogin('The token was refused.'); throw new Error('unauthorized'); }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }
  function showLogin(message) { $('app').hidden = true; $('login').hidden = false; $('login-error').textContent = message || ''; }
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault(); token = $('token').value.trim(); sessionStorage.setItem('mcp-task-token', token); $('login').hidden = true; refresh();
  });
  $('open-form').addEventListener('submit', (event) => { event.preventDefault(); const id = $('open-id').value.trim(); if (id) { selected = id; refreshDetail(); } });
  $('filter-status').addEventListener('change', refresh);
  $('filter-tool').addEventListener('change', refresh);

  const ago = (ms) => { const s = Math.round(ms / 1000); return s < 60 ? s + 's' : s < 3600 ? Math.round(s / 60) + 'm' : Math.round(s / 3600) + 'h'; };
  const ttl = (ms) => ms === null ? '∞' : ago(ms);
  const statusBadge = (status) => el('span', { class: 'status ' + status, text: status.replace('_', ' ') });
  const progressCell = (task) => {
    const cell = el('td', { class: 'progress' }, [el('div', { class: 'message', text: task.statusMessage || '' })]);
    if (task.progress && task.progress.total) {
      const percent = Math.min(100, Math.round((100 * task.progress.progress) / task.progress.total));
      cell.append(el('div', { class: 'bar' }, [el('div', { style: 'width:' + percent + '%' })]));
    }
    return cell;
  };

  async function refresh() {
    const params = new URLSearchParams();
    if ($('filter-status').value) params.set('status', $('filter-status').value);
    if ($('filter-tool').value) params.set('tool', $('filter-tool').value);
    let list;
    try { list = await call('/tasks?' + params); } catch { return; }
    $('app').hidden = false; $('login').hidden = true;
    if (!filtersFilled) {
      for (const status of list.statuses) $('filter-status').append(el('option', { value: status, text: status }));
      for (const tool of list.tools) $('filter-tool').append(el('option', { value: tool, text: tool }));
      filtersFilled = true;
    }
    const viewer = list.viewer;
    $('who').textContent = viewer.principal ? 'signed in as ' + viewer.principal + (viewer.actingAs !== viewer.principal ? ' · viewing ' + viewer.actingAs : '') : 'anonymous';
    $('list-note').textContent = list.listing ? (list.tasks.length === 0 ? 'No tasks.' : list.truncated ? 'Showing the newest ' + list.tasks.length + ' tasks.' : '') : list.reason;
    const rows = list.tasks.map((task) => el('tr', { 'data-task-id': task.taskId, class: task.taskId === selected ? 'selected' : '', onclick: () => { selected = task.taskId; refresh(); refreshDetail(); } }, [
      el('td', {}, [statusBadge(task.status)]),
      el('td', {}, [el('div', { text: task.tool }), el('div', { class: 'mono muted', text: task.taskId.slice(0, 10) + '…' })]),
      progressCell(task),
      el('td', { text: ttl(task.ttlLeftMs) }),
      el('td', { text: ago(Date.now() - task.createdAt) + ' ago' }),
    ]));
    $('tasks').replaceChildren(...rows);
  }

  function fieldFor(name, schema, required) {
    const label = el('label', {}, [el('div', { text: (schema.title || name) + (required ? ' *' : '') })]);
    let input;
    if (schema.type === 'boolean') {
      input = el('input', { type: 'checkbox', name });
      if (schema.default === true) input.checked = true;
    } else if (Array.isArray(schema.enum)) {
      input = el('select', { name }, schema.enum.map((value, i) => el('option', { value, text: (schema.enumNames && schema.enumNames[i]) || value })));
    } else if (schema.type === 'number' || schema.type === 'integer') {
      input = el('input', { type: 'number', name, step: schema.type === 'integer' ? '1' : 'any' });
    } else {
      input = el('input', { type: 'text', name });
    }
    if (schema.default !== undefined && input.type !== 'checkbox') input.value = schema.default;
    label.append(input);
    if (schema.description) label.append(el('div', { class: 'field-help', text: schema.description }));
    return { label, read: () => {
      if (input.type === 'checkbox') return input.checked;
      if (input.value === '') return undefined;
      return schema.type === 'number' || schema.type === 'integer' ? Number(input.value) : input.value;
    } };
  }

  function questionForm(task, question) {
    const properties = (question.schema && question.schema.properties) || {};
    const required = new Set((question.schema && question.schema.required) || []);
    const fields = Object.entries(properties).map(([name, schema]) => [name, fieldFor(name, schema, required.has(name))]);
    const error = el('p', { class: 'error' });
    const send = async (action) => {
      const content = {};
      for (const [name, field] of fields) { const value = field.read(); if (value !== undefined) content[name] = value; }
      try {
        await call('/tasks/' + encodeURIComponent(task.taskId) + '/answer', { method: 'POST', body: JSON.stringify(action === 'accept' ? { key: question.key, content } : { key: question.key, action }) });
        refreshDetail(); refresh();
      } catch (failure) { error.textContent = failure.message; }
    };
    const form = el('form', { class: 'question', 'data-question': question.key, onsubmit: (event) => { event.preventDefault(); send('accept'); } }, [
      el('strong', { text: question.message }),
      ...fields.map(([, field]) => field.label),
      el('div', {}, [el('button', { type: 'submit', text: 'Answer' }), ' ', el('button', { type: 'button', class: 'secondary', text: 'Decline', onclick: () => send('decline') })]),
      error,
    ]);
    return form;
  }

  let shownDetail = '';
  async function refreshDetail() {
    if (!selected) return;
    let body;
    try { body = await call('/tasks/' + encodeURIComponent(selected)); } catch (failure) { $('detail').replaceChildren(el('p', { class: 'error', text: failure.message })); return; }
    const task = body.task;
    // Keep a half-filled answer form: redraw only when the task changed.
    // An observed fact (a repeated create, a timeout) adds an entry without changing the record.
    const stamp = task.taskId + task.lastUpdatedAt + task.status + ':' + task.timeline.length;
    if (stamp === shownDetail) { const left = $('detail').querySelector('.ttl'); if (left) left.textContent = 'TTL left ' + ttl(task.ttlLeftMs); return; }
    shownDetail = stamp;
    const parts = [
      el('div', {}, [statusBadge(task.status), ' ', el('strong', { text: task.tool })]),
      el('div', { class: 'mono muted', text: task.taskId }),
      el('div', { class: 'muted ttl', text: 'TTL left ' + ttl(task.ttlLeftMs) }),
    ];
    if (task.priority) parts.push(el('div', { class: 'muted priority', text: 'priority ' + task.priority + ' (lower runs first)' }));
    if (task.status === 'working' || task.status === 'input_required') {
      parts.push(el('p', {}, [el('button', { class: 'danger', id: 'cancel', text: 'Cancel task', onclick: async () => { try { await call('/tasks/' + encodeURIComponent(task.taskId) + '/cancel', { method: 'POST' }); } catch {} refreshDetail(); refresh(); } })]));
    }
    const open = (id) => () => { selected = id; refresh(); refreshDetail(); };
    if (task.parent) parts.push(el('div', { class: 'parent' }, ['child of ', el('a', { href: '#', class: 'mono', text: task.parent, onclick: open(task.parent) })]));
    if (task.children) {
      parts.push(el('h3', { text: 'Children (' + task.children.filter((child) => child.ended).length + ' of ' + task.children.length + ' done)' }), el('ul', { class: 'children' }, task.children.map((child) =>
        el('li', {}, [el('a', { href: '#', class: 'mono', text: child.taskId, onclick: open(child.taskId) }), ' ', el('span', { text: child.tool + (child.ended ? ' (' + child.ended + ')' : '') })]))));
    }
    for (const question of task.questions) parts.push(questionForm(task, question));
    if (task.result) parts.push(el('h3', { text: task.result.isError ? 'Tool error' : 'Result' }), el('pre', { class: 'result', text: task.result.text }));
    if (task.error) parts.push(el('h3', { text: 'Error' }), el('pre', { class: 'result error', text: task.error.code + ': ' + task.error.message }));
    parts.push(el('h3', { text: 'Timeline' }), el('ul', { class: 'timeline' }, task.timeline.map((entry) =>
      el('li', { 'data-kind': entry.kind }, [el('span', { class: 'kind', text: entry.kind }), ' ', el('span', { text: entry.text }), ' ', el('span', { class: 'muted', text: new Date(entry.at).toLocaleTimeString() })]))));
    $('detail').replaceChildren(...parts);
  }

  refresh();
  setInterval(() => { if (!$('app').hidden) { refresh(); refreshDetail(); } }, 1000);
})();
</script>
</body>
</html>
`;
}
