// The /ui preview page. It only shows what the gateway answers (GET /v1/apps, then each app's
// /v1/apps/{app}/templates, /notifications/preview and /links/check; on a gateway without
// /v1/apps the same endpoints under /v1 and the app of /v1/routes): texts, their lines
// on an iPhone, warnings, links and sizes all come from the API. Every value is inserted as
// text (textContent, text nodes, new Option): the page never builds HTML from strings, and
// its Content-Security-Policy (Trusted Types) would refuse it if it tried.
'use strict';

(() => {
  const KEY_STORAGE = 'pushgate.apiKey';
  const $ = (id) => document.getElementById(id);

  const state = {
    apps: [],          // [{name, bundleId}]
    appsFromAPI: false, // GET /v1/apps answered (several apps); else the single app
    templates: [],
    pushTypes: ['alert'],
    round: 0,
    last: null,        // {campaign, preview, link}
  };

  // ---- DOM helpers: elements with text children only -------------------------------

  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function setText(node, text) {
    node.textContent = text;
  }

  // ---- The API -----------------------------------------------------------------------

  class NeedsKey extends Error {}

  function apiKey() {
    return sessionStorage.getItem(KEY_STORAGE);
  }

  /// `extra`: {contentType, headers} for a body that is not JSON (a Blob streamed as it is).
  async function api(method, path, body, extra) {
    const headers = Object.assign({ 'Accept': 'application/json' }, extra && extra.headers ? extra.headers : {});
    const key = apiKey();
    if (key) headers['Authorization'] = 'Bearer ' + key;
    const init = { method, headers, credentials: 'omit', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = extra && extra.contentType ? extra.contentType : 'application/json';
      init.body = typeof body === 'string' || body instanceof Blob ? body : JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 401) throw new NeedsKey();
    const text = await response.text();
    let json = null;
    try { json = JSON.parse(text); } catch (e) { json = null; }
    return { status: response.status, json, text };
  }

  // ---- The key -------------------------------------------------------------------------

  function showKeyForm(message) {
    $('key-form').hidden = false;
    $('key-held').hidden = true;
    setText($('key-message'), message || '');
    setStatus('This gateway has API keys configured: enter one to use the page.', 'error');
  }

  function showKeyHeld() {
    $('key-form').hidden = true;
    $('key-held').hidden = !apiKey();
  }

  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) return;
    // A bearer token is printable ASCII; anything else could not even be sent as a header.
    if (!/^[\x21-\x7e]+$/.test(key)) {
      setText($('key-message'), 'An API key is printable ASCII (letters, digits, punctuation) without spaces: this is not one.');
      return;
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    $('key-input').value = '';
    start();
  });

  $('key-forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    showKeyForm('');
  });

  // ---- Loading what there is to choose from ------------------------------------------------

  async function loadPushTypes() {
    // The campaign schema in the OpenAPI document lists every push type.
    try {
      const answer = await api('GET', '/openapi.json');
      const types = answer.json.components.schemas.Campaign.properties.push_type.enum;
      if (Array.isArray(types) && types.length) state.pushTypes = types.map(String);
    } catch (e) {
      if (e instanceof NeedsKey) throw e;
    }
  }

  async function loadApps() {
    const apps = await api('GET', '/v1/apps');
    if (apps.status === 200 && apps.json && Array.isArray(apps.json.apps) && apps.json.apps.length > 0) {
      state.appsFromAPI = true;
      state.apps = apps.json.apps.map((a) => ({ name: String(a.name), bundleId: String(a.bundle_id || a.name) }));
      return;
    }
    const routes = await api('GET', '/v1/routes');
    const app = routes.json && routes.json.app ? routes.json.app : {};
    state.appsFromAPI = false;
    state.apps = [{ name: String(app.bundleId || 'app'), bundleId: String(app.bundleId || '') }];
  }

  /// An app's endpoint: under /v1/apps/{app} when the gateway lists apps, else under /v1.
  function appPath(suffix) {
    return state.appsFromAPI ? '/v1/apps/' + encodeURIComponent($('app').value) + suffix : '/v1' + suffix;
  }

  async function loadTemplates() {
    const answer = await api('GET', appPath('/templates'));
    state.templates = answer.json && Array.isArray(answer.json.templates) ? answer.json.templates : [];
  }

  function fillSelect(select, options) {
    clear(select);
    for (const [label, value] of options) select.append(new Option(label, value));
  }

  function fillApps() {
    fillSelect($('app'), state.apps.map((a) => [a.name + (a.bundleId && a.bundleId !== a.name ? ' (' + a.bundleId + ')' : ''), a.name]));
    setText($('app-note'), state.appsFromAPI ? '' : 'One app is configured: ' + (state.apps[0].bundleId || 'its bundle id') + '.');
  }

  function fillChoices() {
    fillSelect($('push-type'), state.pushTypes.map((t) => [t, t]));
    fillTemplates();
  }

  function fillTemplates() {
    fillSelect($('template'), state.templates.map((t) => [t.name, t.name]));
    templateChanged();
  }

  $('app').addEventListener('change', async () => {
    try {
      await loadTemplates();
      fillTemplates();
    } catch (e) {
      if (e instanceof NeedsKey) showKeyForm('The gateway refused the key.');
    }
  });

  function currentTemplate() {
    return state.templates.find((t) => t.name === $('template').value) || null;
  }

  function templateChanged() {
    const t = currentTemplate();
    setText($('template-description'), t && t.description ? t.description : '');
    const locales = [['default strings' + (t && t.default_locale ? ' (' + t.default_locale + ')' : ''), '']];
    for (const tag of t ? t.locales : []) locales.push([tag, tag]);
    fillSelect($('locale'), locales);
    const list = $('variable-list');
    clear(list);
    for (const v of t ? t.variables : []) {
      const id = 'var-' + v.name;
      const label = el('label', null, v.name);
      label.htmlFor = id;
      const input = el('input');
      input.id = id;
      input.autocomplete = 'off';
      input.spellcheck = false;
      input.dataset.variable = v.name;
      list.append(label, input, el('p', 'hint', v.description || 'No description in the template.'));
    }
    if (!t || t.variables.length === 0) list.append(el('p', 'hint', 'This template has no placeholders.'));
    setText($('deeplink-hint'), t && t.deeplink ? 'Empty: the template\'s link, ' + t.deeplink : 'Empty: no deep link.');
    if (t && state.pushTypes.includes(t.push_type)) $('push-type').value = t.push_type;
  }

  $('template').addEventListener('change', templateChanged);

  function mode() {
    return document.querySelector('input[name="mode"]:checked').value;
  }

  function modeChanged() {
    const m = mode();
    $('template-fields').hidden = m !== 'template';
    $('inline-fields').hidden = m !== 'inline';
    $('common-fields').hidden = m === 'json';
    $('json-fields').hidden = m !== 'json';
    if (m === 'json' && !$('campaign-json').value.trim()) {
      $('campaign-json').value = JSON.stringify(buildCampaign('template'), null, 2);
    }
  }

  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener('change', modeChanged);

  // ---- The campaign ------------------------------------------------------------------------

  function buildCampaign(m) {
    const campaign = {};
    if (m === 'template') {
      campaign.template = $('template').value;
      if ($('locale').value) campaign.locale = $('locale').value;
      const variables = {};
      for (const input of document.querySelectorAll('#variable-list input')) {
        if (input.value !== '') variables[input.dataset.variable] = input.value;
      }
      campaign.variables = variables;
    } else {
      const alert = {};
      for (const field of ['title', 'subtitle', 'body']) if ($(field).value !== '') alert[field] = $(field).value;
      campaign.alert = alert;
    }
    if ($('deeplink').value !== '') campaign.deeplink = $('deeplink').value;
    campaign.push_type = $('push-type').value;
    campaign.devices = [$('device').value];
    return campaign;
  }

  /// The campaign text to send, and its parsed form when it parses (to vary the locale).
  function campaignToSend() {
    if (mode() !== 'json') {
      const campaign = buildCampaign(mode());
      return { text: JSON.stringify(campaign), parsed: campaign };
    }
    const text = $('campaign-json').value;
    let parsed = null;
    try { parsed = JSON.parse(text); } catch (e) { parsed = null; }
    return { text, parsed };
  }

  // ---- Preview -----------------------------------------------------------------------------

  function setStatus(text, kind) {
    setText($('status'), text);
    $('status').className = kind || '';
  }

  async function preview() {
    const round = ++state.round;
    const results = $('results');
    results.dataset.state = 'busy';
    setStatus('Asking the gateway…', '');
    try {
      const campaign = campaignToSend();
      const linkText = mode() === 'json' ? (campaign.parsed && typeof campaign.parsed.deeplink === 'string' ? campaign.parsed.deeplink : null)
        : ($('deeplink').value !== '' ? $('deeplink').value : null);
      const [answer, link, locales] = await Promise.all([
        api('POST', appPath('/notifications/preview'), campaign.text),
        linkText === null ? Promise.resolve(null) : api('POST', appPath('/links/check'), { link: linkText }),
        previewEveryLocale(campaign.parsed),
      ]);
      if (round !== state.round) return;
      render(campaign, answer, link, locales);
      results.dataset.state = answer.status === 200 ? 'ready' : 'rejected';
    } catch (e) {
      if (round !== state.round) return;
      if (e instanceof NeedsKey) {
        sessionStorage.removeItem(KEY_STORAGE);
        showKeyForm('The gateway refused the key.');
      } else {
        setStatus('The gateway could not be reached: ' + String(e && e.message ? e.message : e), 'error');
      }
      results.dataset.state = 'error';
    } finally {
      results.dataset.round = String(round);
    }
  }

  /// One preview per locale of the campaign's template (and its default strings).
  async function previewEveryLocale(parsed) {
    if (!parsed || typeof parsed !== 'object' || typeof parsed.template !== 'string') return [];
    const t = state.templates.find((x) => x.name === parsed.template);
    if (!t) return [];
    const tags = [null].concat(t.locales);
    return Promise.all(tags.map(async (tag) => {
      const variant = Object.assign({}, parsed);
      if (tag === null) delete variant.locale; else variant.locale = tag;
      const answer = await api('POST', appPath('/notifications/preview'), variant);
      return { tag, label: tag === null ? 'default strings' + (t.default_locale ? ' (' + t.default_locale + ')' : '') : tag, answer };
    }));
  }

  $('compose-form').addEventListener('submit', (event) => {
    event.preventDefault();
    preview();
  });

  // ---- Rendering ---------------------------------------------------------------------------

  /// The name on the notification: the app's configured name (its bundle id for the
  /// unnamed single app).
  function appName() {
    const app = state.apps.find((a) => a.name === $('app').value) || state.apps[0];
    if (!app) return 'App';
    return app.name === 'default' && app.bundleId ? app.bundleId : app.name;
  }

  function initial(name) {
    const letters = Array.from(name.replace(/^[^A-Za-z0-9]*/, ''));
    return (letters[0] || '?').toUpperCase();
  }

  /// One notification as iOS draws it: icon, app name, time, then the lines the gateway laid out.
  function card(entry, pushType, shownName) {
    const name = shownName || appName();
    const node = el('div', 'card',
      el('div', 'card-head', el('span', 'icon', initial(name)), el('span', 'app', name.toUpperCase()), el('span', 'time', 'now')));
    const alert = entry.alert;
    if (!alert) {
      node.append(el('div', 'text none', 'A ' + pushType + ' push with no alert text: nothing is shown on screen.'));
      return node;
    }
    for (const field of ['title', 'subtitle', 'body']) {
      const text = alert[field];
      if (!text) continue;
      const block = el('div', 'text ' + field);
      block.dataset.field = field;
      for (const line of text.lines) block.append(el('div', 'line', line));
      node.append(block);
    }
    return node;
  }

  function threadOf(entry) {
    const aps = entry.body && entry.body.aps;
    return aps && typeof aps['thread-id'] === 'string' ? aps['thread-id'] : null;
  }

  /// Notifications of one thread stack; the newest (first) is drawn in full.
  function groups(entries, pushType) {
    const byThread = new Map();
    for (const entry of entries) {
      const thread = threadOf(entry);
      const key = thread === null ? '\u0000' + byThread.size : thread;
      if (!byThread.has(key)) byThread.set(key, { thread, entries: [] });
      byThread.get(key).entries.push(entry);
    }
    const out = [];
    for (const group of byThread.values()) {
      const node = el('div', 'group');
      node.dataset.count = String(group.entries.length);
      node.append(card(group.entries[0], pushType));
      if (group.entries.length > 1) {
        node.classList.add('stacked');
        const more = group.entries.length - 1;
        node.append(el('div', 'stack-edge'), el('div', 'stack-more', more + ' more notification' + (more === 1 ? '' : 's')));
      }
      node.append(el('div', 'thread', group.thread === null ? 'no thread-id: not grouped' : 'thread ' + group.thread));
      out.push(node);
    }
    return out;
  }

  function phones(preview, scheme) {
    const entries = preview.requests;
    const pushType = preview.push_type;
    const column = el('div', 'appearance ' + scheme);
    column.dataset.scheme = scheme;
    column.append(el('h4', null, scheme === 'light' ? 'Light' : 'Dark'));

    const lock = el('div', 'phone lock', el('div', 'clock', '9:41'), el('div', 'date', 'Tuesday 1 December'));
    for (const g of groups(entries, pushType)) lock.append(g);
    column.append(el('figure', null, lock, el('figcaption', null, 'Lock screen')));

    const banner = el('div', 'phone banner', el('div', 'banner-slot', card(entries[0], pushType)), el('div', 'home'));
    column.append(el('figure', null, banner, el('figcaption', null, 'Banner')));

    const center = el('div', 'phone center', el('div', 'center-title', 'Notification Center'));
    for (const g of groups(entries, pushType)) center.append(g);
    column.append(el('figure', null, center, el('figcaption', null, 'Notification Center')));
    return column;
  }

  function sourcesLine(alert) {
    if (!alert) return 'no alert text';
    const parts = [];
    for (const field of ['title', 'subtitle', 'body']) if (alert[field]) parts.push(field + ' from ' + alert[field].source);
    return parts.join(' · ');
  }

  function problemLines(answer) {
    const json = answer.json;
    if (!json) return ['HTTP ' + answer.status + ': ' + answer.text.slice(0, 500)];
    const lines = [];
    if (Array.isArray(json.errors) && json.errors.length) {
      for (const e of json.errors) {
        const place = e.pointer !== undefined ? e.pointer : e.parameter !== undefined ? e.parameter : e.header !== undefined ? e.header : e.line !== undefined ? 'line ' + e.line : '';
        lines.push((place ? place + ': ' : '') + String(e.detail) + ' [' + String(e.code) + ']');
      }
    } else {
      lines.push(String(json.detail || json.title || ('HTTP ' + answer.status)) + (json.code ? ' [' + json.code + ']' : ''));
    }
    return lines;
  }

  function render(campaign, answer, link, locales) {
    state.last = { campaign, answer, link };
    setText($('sent-campaign'), campaign.text);
    const problems = $('problems');
    clear(problems);
    clear($('warnings'));
    clear($('appearances'));
    clear($('locales'));
    clear($('link'));
    setText($('request-head'), '');
    setText($('request-body'), '');
    setText($('size-label'), '');
    $('size-fill').style.width = '0%';
    $('download-apns').disabled = true;

    renderLink(link, answer);

    if (answer.status !== 200) {
      setStatus('The gateway would refuse this campaign:', 'error');
      for (const line of problemLines(answer)) problems.append(el('li', null, line));
      $('locales-section').hidden = true;
      return;
    }
    const preview = answer.json;
    const first = preview.requests[0];
    setStatus('Preview of ' + preview.shown + ' of ' + preview.device_count + ' device' + (preview.device_count === 1 ? '' : 's') +
      ' · push type ' + preview.push_type + ' · topic ' + preview.topic + ' · priority ' + preview.priority +
      (preview.template ? ' · template ' + preview.template : '') +
      (first.alert && first.alert.locale ? ' · locale ' + first.alert.locale : ''), 'ok');

    const warnings = $('warnings');
    for (const w of first.warnings) {
      const item = el('li', 'warning', w.message);
      item.dataset.code = w.code;
      warnings.append(item);
    }
    if (link && link.json && link.json.ok === false) {
      const item = el('li', 'warning', 'The deep link is rejected: ' + link.json.error.message + ' [' + link.json.error.code + ']');
      item.dataset.code = link.json.error.code;
      warnings.append(item);
    }
    if (!warnings.firstChild) warnings.append(el('li', 'none', 'No warnings.'));

    const share = first.size / first.limit;
    setText($('size-label'), 'Payload: ' + first.size + ' of ' + first.limit + ' bytes (' + Math.round(share * 100) + '%)' +
      (first.truncated ? ', the body was shortened to fit' : ''));
    $('size-fill').style.width = Math.min(100, share * 100).toFixed(1) + '%';
    $('size-fill').className = share > 0.9 ? 'high' : share > 0.6 ? 'medium' : 'low';

    $('appearances').append(phones(preview, 'light'), phones(preview, 'dark'));

    $('locales-section').hidden = locales.length === 0;
    for (const variant of locales) {
      const box = el('div', 'locale');
      box.dataset.locale = variant.tag === null ? '' : variant.tag;
      box.append(el('h4', null, variant.label));
      if (variant.answer.status === 200) {
        const entry = variant.answer.json.requests[0];
        box.append(el('p', 'sources', sourcesLine(entry.alert)));
        box.append(el('div', 'phone mini light', card(entry, variant.answer.json.push_type)));
        const list = el('ul', 'warnings');
        for (const w of entry.warnings) list.append(el('li', 'warning', w.message));
        box.append(list);
      } else {
        const list = el('ul', 'problems');
        for (const line of problemLines(variant.answer)) list.append(el('li', null, line));
        box.append(list);
      }
      $('locales').append(box);
    }

    const head = [first.method + ' ' + first.path];
    for (const [name, value] of Object.entries(first.headers)) head.push(name + ': ' + value);
    setText($('request-head'), head.join('\n'));
    setText($('request-body'), first.body_text);
    $('download-apns').disabled = !first.simulator;
    $('download-apns').title = first.simulator ? first.simulator.file_name : 'The Simulator takes only alert and background pushes.';
  }

  function renderLink(link, answer) {
    const box = $('link');
    let result = null;
    if (link && link.json) result = link.json;
    else if (answer.status === 200 && answer.json.requests[0].link) result = answer.json.requests[0].link;
    if (!result && answer.status !== 200 && answer.json && Array.isArray(answer.json.errors)) {
      const e = answer.json.errors.find((x) => typeof x.pointer === 'string' && (x.pointer === '/deeplink' || /deep link/.test(String(x.detail))));
      if (e) result = { ok: false, error: { code: e.code, message: e.detail } };
    }
    if (!result) {
      box.append(el('p', 'hint', 'No deep link: tapping the notification opens the app.'));
      return;
    }
    if (result.ok === false) {
      const p = el('p', 'rejected', 'Rejected: ', el('code', 'code', String(result.error.code)), ' — ', String(result.error.message));
      p.id = 'link-rejected';
      box.append(p);
      return;
    }
    const table = el('dl', 'link-table');
    const row = (name, value, id) => {
      const dd = el('dd', null, value);
      if (id) dd.id = id;
      table.append(el('dt', null, name), dd);
    };
    row('Canonical link', result.canonical, 'link-canonical');
    row('Route', result.route, 'link-route');
    for (const [name, value] of Object.entries(result.params)) row('Parameter ' + name, value);
    for (const [name, value] of Object.entries(result.query)) row('Query ' + name, value);
    box.append(table);
  }

  // ---- Copy and download ---------------------------------------------------------------------

  async function copy(text, what) {
    try {
      await navigator.clipboard.writeText(text);
      setText($('copy-message'), what + ' copied.');
    } catch (e) {
      setText($('copy-message'), 'Copying is not allowed here: select the text below instead.');
    }
  }

  $('copy-request').addEventListener('click', () => copy($('request-head').textContent, 'Headers'));
  $('copy-body').addEventListener('click', () => copy($('request-body').textContent, 'Body'));
  $('copy-campaign').addEventListener('click', () => copy($('sent-campaign').textContent, 'Campaign'));

  $('download-apns').addEventListener('click', () => {
    const first = state.last && state.last.answer.status === 200 ? state.last.answer.json.requests[0] : null;
    if (!first || !first.simulator) return;
    const url = URL.createObjectURL(new Blob([first.simulator.contents], { type: 'application/octet-stream' }));
    const a = el('a');
    a.href = url;
    a.download = first.simulator.file_name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  });

  // ---- Send: the composed campaign to many devices, as application/x-ndjson ---------------
  //
  // The campaign goes on the first line without its devices, then the pasted tokens or the
  // chosen file, one token per line: the file is a Blob handed to fetch, so its tokens are
  // never read into this page. The Idempotency-Key is made once per composition, so a second
  // click (or a retry after a lost answer) answers with the campaign already made.

  const send = { key: null, busy: false, count: 0 };

  function newIdempotencyKey() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return 'ui-' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  function compositionChanged() {
    send.key = null;
    $('send-confirm').hidden = true;
  }

  $('compose-form').addEventListener('input', compositionChanged);
  $('compose-form').addEventListener('change', compositionChanged);
  for (const id of ['send-devices', 'send-file', 'send-dry-run', 'send-at', 'send-lane']) {
    $(id).addEventListener('input', compositionChanged);
    $(id).addEventListener('change', compositionChanged);
  }
  $('send-devices').addEventListener('input', () => countDevices().catch(() => {}));
  $('send-file').addEventListener('change', () => countDevices().catch(() => {}));

  function isDeviceLine(line) {
    const t = line.trim();
    return t !== '' && !t.startsWith('#');
  }

  /// Device lines as the gateway counts them: blank lines and # comments skipped.
  async function countDevices() {
    const file = $('send-file').files[0];
    let count = 0;
    if (file) {
      const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const lines = (rest + value).split('\n');
        rest = lines.pop();
        for (const line of lines) if (isDeviceLine(line)) count++;
      }
      if (isDeviceLine(rest)) count++;
    } else {
      count = $('send-devices').value.split('\n').filter(isDeviceLine).length;
    }
    send.count = count;
    setText($('send-count'), count === 0 ? '' : count.toLocaleString('en-US') + ' device' + (count === 1 ? '' : 's') +
      (file ? ' in ' + file.name : ''));
    return count;
  }

  function setSendStatus(text, kind) {
    setText($('send-status'), text);
    $('send-status').className = kind || '';
  }

  /// The request body: the campaign line, then the device lines. nil and a reason when there is nothing to send.
  function sendBody(confirmDevices) {
    const campaign = campaignToSend();
    if (!campaign.parsed || typeof campaign.parsed !== 'object' || Array.isArray(campaign.parsed)) {
      return { error: 'The campaign JSON is not a JSON object: fix it (Preview lists the problems).' };
    }
    const header = Object.assign({}, campaign.parsed);
    const file = $('send-file').files[0];
    let devices = null;
    if (file) devices = file;
    else if ($('send-devices').value.split('\n').some(isDeviceLine)) devices = $('send-devices').value + '\n';
    else if (mode() === 'json' && Array.isArray(header.devices) && header.devices.length) devices = header.devices.map(String).join('\n') + '\n';
    if (devices === null) return { error: 'Paste device tokens or choose a file: the sample device is only for the preview.' };
    delete header.devices;
    // The app chosen above, unless the pasted campaign names one.
    if (state.appsFromAPI && header.app === undefined) header.app = $('app').value;
    if ($('send-dry-run').checked) header.dry_run = true; else delete header.dry_run;
    const at = $('send-at').value;
    if (at) {
      const when = new Date(at);
      if (isNaN(when.getTime())) return { error: 'Send at is not a date and time.' };
      header.send_at = when.toISOString();
    } else {
      delete header.send_at;
    }
    if ($('send-lane').value) header.lane = $('send-lane').value; else delete header.lane;
    if (confirmDevices !== undefined) header.confirm_devices = confirmDevices;
    return { blob: new Blob([JSON.stringify(header) + '\n', devices], { type: 'application/x-ndjson' }) };
  }

  async function sendCampaign(confirmDevices) {
    if (send.busy) return;  // a second click while the first is on its way does nothing
    send.busy = true;
    $('send-button').disabled = true;
    $('send-confirm-button').disabled = true;
    clear($('send-problems'));
    const form = $('send-form');
    form.dataset.state = 'busy';
    try {
      const body = sendBody(confirmDevices);
      if (body.error) {
        setSendStatus(body.error, 'error');
        form.dataset.state = 'refused';
        return;
      }
      if (!send.key) send.key = newIdempotencyKey();
      setSendStatus('Sending the campaign to the gateway…', '');
      const answer = await api('POST', '/v1/campaigns', body.blob,
        { contentType: 'application/x-ndjson', headers: { 'Idempotency-Key': send.key } });
      if (answer.status === 202 && answer.json) {
        const a = answer.json;
        $('send-confirm').hidden = true;
        setText($('send-status'), '');
        $('send-status').className = 'ok';
        $('send-status').append(
          (a.replayed ? 'Already sent (the same request was sent before; nothing new was sent): campaign ' : 'Sent: campaign ') + a.id +
          ', ' + a.devices.toLocaleString('en-US') + ' device' + (a.devices === 1 ? '' : 's') +
          (a.skipped ? ' (' + a.skipped.toLocaleString('en-US') + ' dead, skipped)' : '') + (a.dry_run ? ', dry run' : '') + '. ',
          link('#/campaigns/' + a.id, 'Watch it', 'send-watch'));
        form.dataset.campaign = a.id;
        form.dataset.state = a.replayed ? 'replayed' : 'sent';
        return;
      }
      if (answer.status === 422 && answer.json && answer.json.code === 'confirmationRequired' && confirmDevices === undefined) {
        const count = await countDevices();
        setText($('send-confirm-text'), 'This goes to ' + count.toLocaleString('en-US') + ' devices; type ' + count + ' to confirm.');
        $('send-confirm-input').value = '';
        $('send-confirm').hidden = false;
        setSendStatus(String(answer.json.detail), '');
        form.dataset.state = 'confirm';
        return;
      }
      setSendStatus('The gateway refused the campaign (HTTP ' + answer.status + '):', 'error');
      for (const line of problemLines(answer)) $('send-problems').append(el('li', null, line));
      form.dataset.state = 'refused';
    } catch (e) {
      if (e instanceof NeedsKey) {
        sessionStorage.removeItem(KEY_STORAGE);
        showKeyForm('The gateway refused the key.');
      } else {
        // A body over server.maxBodyBytes is refused before it is read: the browser then
        // sees the connection closed mid-upload rather than the 413.
        const file = $('send-file').files[0];
        setSendStatus('The gateway could not be reached: ' + String(e && e.message ? e.message : e) +
          (file ? ' (a file larger than the gateway\u2019s server.maxBodyBytes is refused before it is read)' : ''), 'error');
      }
      form.dataset.state = 'error';
    } finally {
      send.busy = false;
      $('send-button').disabled = false;
      $('send-confirm-button').disabled = false;
    }
  }

  $('send-form').addEventListener('submit', (event) => {
    event.preventDefault();
    sendCampaign();
  });

  $('send-confirm-button').addEventListener('click', async () => {
    const count = await countDevices();
    if ($('send-confirm-input').value.trim() !== String(count)) {
      setSendStatus('Type ' + count + ' (the number of devices) to send.', 'error');
      return;
    }
    sendCampaign(count);
  });

  $('send-confirm-cancel').addEventListener('click', () => {
    $('send-confirm').hidden = true;
    setSendStatus('Not sent.', '');
    $('send-form').dataset.state = 'idle';
  });

  // ---- Views: #/ (preview and send), #/campaigns, #/campaigns/{id}, #/dead --------------------

  const VIEWS = ['preview', 'campaigns', 'campaign', 'dead'];
  const HEADINGS = { preview: 'Notification preview', campaigns: 'Campaigns', campaign: 'Campaign', dead: 'Dead tokens' };
  let viewToken = 0;  // bumped on every navigation: the polls of a view left behind stop

  function link(href, text, id) {
    const a = el('a', null, text);
    a.href = href;
    if (id) a.id = id;
    return a;
  }

  function currentRoute() {
    const hash = location.hash || '#/';
    const m = /^#\/campaigns\/([0-9a-f-]{36})$/.exec(hash);
    if (m) return { view: 'campaign', id: m[1] };
    if (hash === '#/campaigns') return { view: 'campaigns' };
    if (hash === '#/dead') return { view: 'dead' };
    return { view: 'preview' };
  }

  function showView() {
    const route = currentRoute();
    const token = ++viewToken;
    for (const v of VIEWS) $('view-' + v).hidden = v !== route.view;
    for (const [id, v] of [['nav-preview', 'preview'], ['nav-campaigns', 'campaigns'], ['nav-dead', 'dead']]) {
      $(id).classList.toggle('current', v === route.view || (v === 'campaigns' && route.view === 'campaign'));
    }
    setText($('page-heading'), HEADINGS[route.view]);
    $('approximation').hidden = route.view !== 'preview';
    if (document.body.dataset.ready !== 'true') return;
    if (route.view === 'campaigns') openCampaigns(token);
    else if (route.view === 'campaign') openCampaign(route.id, token);
    else if (route.view === 'dead') openDead(token);
  }

  window.addEventListener('hashchange', showView);

  /// Waits `ms`, then for as long as the tab is hidden: a page nobody looks at asks nothing.
  async function sleep(ms) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    while (document.hidden) await new Promise((resolve) => document.addEventListener('visibilitychange', resolve, { once: true }));
  }

  function consoleFailure(e, statusId) {
    if (e instanceof NeedsKey) {
      sessionStorage.removeItem(KEY_STORAGE);
      showKeyForm('The gateway refused the key.');
      document.body.dataset.ready = 'key';
    } else {
      setText($(statusId), 'The gateway could not be reached: ' + String(e && e.message ? e.message : e));
      $(statusId).className = 'error';
    }
  }

  // ---- Progress: counts, bar, rate and time left ------------------------------------------

  function tally(summary) {
    const c = summary.counts;
    return {
      total: summary.devices,
      delivered: c.delivered + c['dry-run'],
      failed: c.failed + c.unregistered,
      notSent: c.skipped + c.cancelled + c.expired,
      remaining: c.pending + c['in-flight'] + c.retrying,
    };
  }

  function fmt(n) {
    return Number(n).toLocaleString('en-US');
  }

  function progressBar(summary, node) {
    const t = tally(summary);
    const bar = node || el('div', 'progress');
    clear(bar);
    for (const [cls, n, label] of [['delivered', t.delivered, 'delivered'], ['failed', t.failed, 'failed'], ['notsent', t.notSent, 'not sent']]) {
      const part = el('div', cls);
      part.style.width = (t.total ? (100 * n / t.total) : 0).toFixed(2) + '%';
      part.title = fmt(n) + ' ' + label;
      bar.append(part);
    }
    bar.dataset.delivered = String(t.delivered);
    bar.dataset.failed = String(t.failed);
    bar.dataset.remaining = String(t.remaining);
    return bar;
  }

  function numbersLine(summary) {
    const t = tally(summary);
    const parts = [fmt(t.delivered) + (summary.dry_run ? ' sent (dry run)' : ' delivered'), fmt(t.failed) + ' failed', fmt(t.remaining) + ' remaining'];
    if (t.notSent) parts.push(fmt(t.notSent) + ' not sent');
    return parts.join(' · ') + ' of ' + fmt(t.total);
  }

  /// Rates from what this page saw: the finished count over the last 15 seconds of polls,
  /// else the average since the campaign started.
  const samples = new Map();

  function rateLine(summary) {
    const t = tally(summary);
    const finished = t.total - t.remaining;
    const now = Date.now();
    const seen = (samples.get(summary.id) || []).filter((s) => now - s.at <= 15000);
    seen.push({ at: now, finished });
    samples.set(summary.id, seen);
    const started = Date.parse(summary.send_at || summary.created_at);
    if (summary.status === 'completed' || summary.status === 'cancelled' || summary.status === 'expired') {
      const end = summary.finished_at ? Date.parse(summary.finished_at) : now;
      const seconds = Math.max(0, (end - started) / 1000);
      return summary.finished_at ? 'finished in ' + duration(seconds) : 'finishing';
    }
    if (summary.status !== 'sending') {
      return summary.status === 'scheduled' ? 'starts at ' + summary.send_at : summary.status;
    }
    let rate = 0;
    const first = seen[0];
    if (now - first.at >= 1500 && finished > first.finished) rate = (finished - first.finished) / ((now - first.at) / 1000);
    else if (now > started && finished > 0) rate = finished / ((now - started) / 1000);
    if (rate <= 0) return 'measuring the rate…';
    return fmt(Math.round(rate)) + ' a second · about ' + duration(t.remaining / rate) + ' left';
  }

  function duration(seconds) {
    if (seconds < 1) return 'under a second';
    if (seconds < 90) return Math.round(seconds) + ' s';
    if (seconds < 5400) return Math.round(seconds / 60) + ' min';
    return (seconds / 3600).toFixed(1) + ' h';
  }

  function badge(status) {
    const b = el('span', 'badge ' + status, status);
    b.dataset.status = status;
    return b;
  }

  // ---- The campaigns list -----------------------------------------------------------------

  const list = { before: null, newer: [], next: null };

  function fillConsoleApps() {
    const apps = state.appsFromAPI ? state.apps.map((a) => [a.name, a.name]) : [];
    fillSelect($('filter-app'), [['every app', '']].concat(apps));
    $('filter-app').disabled = !state.appsFromAPI;
    fillSelect($('dead-app'), state.apps.map((a) => [a.name, a.name]));
  }

  for (const id of ['filter-status', 'filter-app']) {
    $(id).addEventListener('change', () => {
      list.before = null;
      list.newer = [];
      showView();
    });
  }
  $('campaigns-older').addEventListener('click', () => {
    if (!list.next) return;
    list.newer.push(list.before);
    list.before = list.next;
    showView();
  });
  $('campaigns-newer').addEventListener('click', () => {
    if (list.newer.length === 0) return;
    list.before = list.newer.pop();
    showView();
  });

  function listPath() {
    const query = ['limit=20'];
    if (list.before) query.push('before=' + list.before);
    if ($('filter-app').value) query.push('app=' + encodeURIComponent($('filter-app').value));
    if ($('filter-status').value) query.push('status=' + encodeURIComponent($('filter-status').value));
    return '/v1/campaigns?' + query.join('&');
  }

  function campaignRow(summary) {
    const row = link('#/campaigns/' + summary.id, null);
    row.className = 'campaign-row';
    row.dataset.id = summary.id;
    row.dataset.status = summary.status;
    const who = el('div', 'who', badge(summary.status),
      el('strong', null, summary.app === null ? 'app unnamed' : summary.app), ' · ' + summary.lane + (summary.dry_run ? ' · dry run' : ''),
      el('div', 'id', summary.id), el('div', 'numbers', 'created ' + summary.created_at));
    const progress = el('div', null, progressBar(summary), el('div', 'numbers count-line', numbersLine(summary)),
      el('div', 'numbers rate-line', rateLine(summary)));
    row.append(who, progress);
    return row;
  }

  async function openCampaigns(token) {
    const box = $('campaign-list');
    for (;;) {
      const started = Date.now();
      try {
        const answer = await api('GET', listPath());
        if (token !== viewToken) return;
        clear(box);
        if (answer.status !== 200 || !answer.json) {
          setText($('campaigns-status'), problemLines(answer).join(' '));
          $('campaigns-status').className = 'error';
        } else {
          const campaigns = answer.json.campaigns;
          for (const summary of campaigns) box.append(campaignRow(summary));
          list.next = answer.json.next ? new URLSearchParams(answer.json.next.split('?')[1]).get('before') : null;
          setText($('campaigns-status'), campaigns.length === 0 ? 'No campaigns' + (answer.json.next ? ' here; older ones may match.' : '.')
            : 'Newest first. ' + campaigns.length + ' shown.');
          $('campaigns-status').className = '';
        }
        $('campaigns-older').disabled = !list.next;
        $('campaigns-newer').disabled = list.newer.length === 0;
        box.dataset.round = String(Number(box.dataset.round) + 1);
      } catch (e) {
        if (token !== viewToken) return;
        consoleFailure(e, 'campaigns-status');
        return;
      }
      // At most one request every 2 seconds while the list is open.
      await sleep(Math.max(0, 2000 - (Date.now() - started)));
      if (token !== viewToken) return;
    }
  }

  // ---- One campaign -------------------------------------------------------------------------

  const FAILED_STATES = 'failed,unregistered';
  const one = { id: null, page: 1, perPage: 50, summary: null };

  function campaignPath() {
    return '/v1/campaigns/' + one.id + '?state=' + FAILED_STATES + '&page=' + one.page + '&per_page=' + one.perPage;
  }

  function fact(table, name, value, id) {
    const dd = el('dd', null, value === null || value === undefined ? '—' : String(value));
    if (id) dd.id = id;
    table.append(el('dt', null, name), dd);
  }

  function renderCampaign(detail) {
    one.summary = detail;
    const view = $('view-campaign');
    view.dataset.status = detail.status;
    setText($('campaign-title'), (detail.app === null ? 'Campaign' : detail.app) + ' · ' + detail.id);
    const status = $('campaign-status');
    clear(status);
    status.className = '';
    status.append(badge(detail.status), detail.dry_run ? 'dry run' : (detail.environment || ''));
    progressBar(detail, $('campaign-progress'));
    setText($('campaign-numbers'), numbersLine(detail));
    setText($('campaign-rate'), rateLine(detail));

    const final = detail.status === 'completed' || detail.status === 'cancelled' || detail.status === 'expired';
    $('campaign-pause').disabled = final || detail.status === 'paused' || detail.status === 'filling';
    $('campaign-resume').disabled = detail.status !== 'paused';
    $('campaign-cancel').disabled = final;
    if (final) $('cancel-confirm').hidden = true;

    const facts = $('campaign-facts');
    clear(facts);
    fact(facts, 'App', detail.app);
    fact(facts, 'Lane', detail.lane);
    fact(facts, 'Rate limit', detail.rate_per_second === null ? 'none' : detail.rate_per_second + ' a second');
    fact(facts, 'Created', detail.created_at);
    fact(facts, 'Send at', detail.send_at === null ? 'at once' : detail.send_at, 'fact-send-at');
    fact(facts, 'Expires', detail.expires_at === null ? 'never' : detail.expires_at, 'fact-expires-at');
    fact(facts, 'Finished', detail.finished_at);
    fact(facts, 'Not sent (cancelled or expired)', fmt(detail.not_sent), 'fact-not-sent');

    const counts = $('campaign-counts').tBodies[0];
    clear(counts);
    for (const [name, n] of Object.entries(detail.counts)) {
      const row = el('tr', null, el('td', null, name), el('td', null, fmt(n)));
      row.dataset.state = name;
      row.dataset.count = String(n);
      counts.append(row);
    }

    const failedTotal = detail.counts.failed + detail.counts.unregistered;
    const pages = Math.max(1, Math.ceil(failedTotal / one.perPage));
    setText($('failed-summary'), failedTotal === 0 ? 'No device has failed.'
      : fmt(detail.counts.failed) + ' failed, ' + fmt(detail.counts.unregistered) + ' unregistered (APNs says the token is no longer valid). Each with the reason APNs gave.');
    const rows = $('failed-list').tBodies[0];
    clear(rows);
    for (const r of detail.results) {
      const row = el('tr', null, el('td', null, String(r.index)), el('td', 'token', r.token), el('td', null, r.state),
        el('td', null, r.status === undefined ? '—' : String(r.status)), el('td', 'reason', r.reason === undefined ? '—' : r.reason),
        el('td', null, String(r.attempts)));
      row.dataset.token = r.token;
      rows.append(row);
    }
    setText($('failed-page'), 'page ' + one.page + ' of ' + pages);
    $('failed-prev').disabled = one.page <= 1;
    $('failed-next').disabled = one.page >= pages;
    view.dataset.round = String(Number(view.dataset.round) + 1);
  }

  /// What was sent: the message's members, its link and route, and the lock screen drawn
  /// by the preview API from the alert the campaign sent.
  async function renderMessage(token) {
    const box = $('campaign-message');
    const phone = $('campaign-phone');
    clear(box);
    clear(phone);
    const answer = await api('GET', '/v1/campaigns/' + one.id + '/message');
    if (token !== viewToken) return;
    if (answer.status !== 200 || !answer.json) {
      box.append(el('p', 'error', problemLines(answer).join(' ')));
      return;
    }
    const m = answer.json;
    const payload = m.payload && typeof m.payload === 'object' ? m.payload : {};
    const facts = el('dl', 'link-table');
    fact(facts, 'Push type', m.push_type);
    fact(facts, 'Topic', m.topic);
    fact(facts, 'Priority', m.priority);
    fact(facts, 'Collapse id', m.collapse_id);
    fact(facts, 'apns-expiration', m.expiration);
    fact(facts, 'Deep link', typeof payload.deeplink === 'string' ? payload.deeplink : 'none', 'message-deeplink');
    const route = payload.route && typeof payload.route === 'object' ? payload.route : null;
    fact(facts, 'Route', route ? String(route.name) : 'none', 'message-route');
    if (route && route.params && typeof route.params === 'object') {
      for (const [name, value] of Object.entries(route.params)) fact(facts, 'Parameter ' + name, String(value));
    }
    if (m.channel) fact(facts, 'Channel', m.channel);
    box.append(facts);
    const body = el('details', null, el('summary', null, 'APNs body'), el('pre', 'code', JSON.stringify(m.payload, null, 2)));
    box.append(body);

    const aps = payload.aps && typeof payload.aps === 'object' ? payload.aps : {};
    let alert = aps.alert;
    if (typeof alert === 'string') alert = { body: alert };
    const inline = {};
    if (alert && typeof alert === 'object') for (const f of ['title', 'subtitle', 'body']) if (typeof alert[f] === 'string' && alert[f] !== '') inline[f] = alert[f];
    const name = m.app === null || m.app === 'default' ? appName() : m.app;
    if (Object.keys(inline).length === 0) {
      phone.append(el('div', 'phone lock mini', el('div', 'card', el('div', 'text none',
        alert ? 'The alert is localized on the device (loc-key): no text to draw.' : 'A ' + m.push_type + ' push with no alert text: nothing is shown on screen.'))));
      return;
    }
    const campaign = { alert: inline, push_type: 'alert', devices: [$('device').value] };
    if (typeof aps['thread-id'] === 'string') campaign.thread_id = aps['thread-id'];
    const path = state.appsFromAPI && m.app !== null ? '/v1/apps/' + encodeURIComponent(m.app) + '/notifications/preview' : '/v1/notifications/preview';
    const drawn = await api('POST', path, campaign);
    if (token !== viewToken) return;
    if (drawn.status !== 200) {
      phone.append(el('p', 'error', 'The lock screen could not be drawn: ' + problemLines(drawn).join(' ')));
      return;
    }
    phone.append(el('h4', null, 'Lock screen (an approximation of iOS)'),
      el('div', 'phone lock', el('div', 'clock', '9:41'), el('div', 'date', 'Tuesday 1 December'), card(drawn.json.requests[0], 'alert', name)));
  }

  async function loadReasons(token) {
    const answer = await api('GET', '/v1/campaigns/' + one.id + '/reasons');
    if (token !== viewToken) return;
    const rows = $('campaign-reasons').tBodies[0];
    clear(rows);
    if (answer.status !== 200 || !answer.json) {
      rows.append(el('tr', null, el('td', 'error', problemLines(answer).join(' '))));
    } else if (answer.json.reasons.length === 0) {
      rows.append(el('tr', null, el('td', 'hint', 'No device has an APNs reason.')));
    } else {
      for (const r of answer.json.reasons) {
        const row = el('tr', null, el('td', 'reason', r.reason), el('td', null, r.state), el('td', null, fmt(r.count)));
        row.dataset.reason = r.reason;
        row.dataset.state = r.state;
        row.dataset.count = String(r.count);
        rows.append(row);
      }
    }
    $('campaign-reasons').dataset.round = String(Number($('campaign-reasons').dataset.round) + 1);
  }

  async function refreshCampaign(token) {
    const answer = await api('GET', campaignPath());
    if (token !== viewToken) return null;
    if (answer.status !== 200 || !answer.json) {
      setText($('campaign-status'), answer.status === 404 ? 'No such campaign for this key.' : problemLines(answer).join(' '));
      $('campaign-status').className = 'error';
      $('view-campaign').dataset.round = String(Number($('view-campaign').dataset.round) + 1);
      return null;
    }
    renderCampaign(answer.json);
    return answer.json;
  }

  async function openCampaign(id, token) {
    if (one.id !== id) {
      one.id = id;
      one.page = 1;
    }
    $('cancel-confirm').hidden = true;
    setText($('campaign-action-message'), '');
    clear($('campaign-reasons').tBodies[0]);
    try {
      renderMessage(token).catch((e) => consoleFailure(e, 'campaign-status'));
      // Polled while it is not final: one request at a time, at most one a second. The
      // counts by reason take a turn of their own when the devices with a reason changed
      // (at most every 5 seconds while it sends: they cost a pass over the campaign's rows).
      one.reasonsKey = null;
      one.reasonsAt = 0;
      let reasonsDue = false;
      for (;;) {
        const started = Date.now();
        if (reasonsDue) {
          reasonsDue = false;
          await loadReasons(token);
        } else {
          const detail = await refreshCampaign(token);
          if (!detail) return;
          const c = detail.counts;
          const key = String(c.failed + c.unregistered + c.retrying);
          const final = ['completed', 'cancelled', 'expired'].includes(detail.status) && tally(detail).remaining === 0;
          if (key !== one.reasonsKey && (final || Date.now() - one.reasonsAt >= 5000)) {
            one.reasonsKey = key;
            one.reasonsAt = Date.now();
            reasonsDue = true;
          }
          // A cancelled or expired campaign's unsent devices are closed in batches: poll until they are.
          if (final && !reasonsDue) return;
        }
        if (token !== viewToken) return;
        await sleep(Math.max(0, 1000 - (Date.now() - started)));
        if (token !== viewToken) return;
      }
    } catch (e) {
      if (token === viewToken) consoleFailure(e, 'campaign-status');
    }
  }

  async function lifecycle(action) {
    const token = viewToken;
    for (const id of ['campaign-pause', 'campaign-resume', 'campaign-cancel', 'cancel-confirm-yes']) $(id).disabled = true;
    try {
      const answer = await api('POST', '/v1/campaigns/' + one.id + '/' + action);
      if (token !== viewToken) return;
      const message = $('campaign-action-message');
      if (answer.status === 200) {
        setText(message, action === 'pause' ? 'Paused: nothing new is sent (what was in flight finishes).'
          : action === 'resume' ? 'Resumed.' : 'Cancelled: ' + fmt(answer.json.not_sent) + ' devices will not be sent.');
        message.className = '';
      } else {
        setText(message, problemLines(answer).join(' '));
        message.className = 'error';
      }
      $('cancel-confirm').hidden = true;
      // Show the new state now (the poll goes on while the campaign is not final).
      await refreshCampaign(token);
    } catch (e) {
      consoleFailure(e, 'campaign-action-message');
    } finally {
      $('cancel-confirm-yes').disabled = false;
    }
  }

  $('campaign-pause').addEventListener('click', () => lifecycle('pause'));
  $('campaign-resume').addEventListener('click', () => lifecycle('resume'));
  $('campaign-cancel').addEventListener('click', () => {
    const s = one.summary;
    if (!s) return;
    const unsent = s.counts.pending + s.counts.retrying;
    setText($('cancel-confirm-text'), 'Cancel this campaign? ' + fmt(unsent) + ' device' + (unsent === 1 ? '' : 's') +
      ' not sent yet will not be sent' + (s.counts['in-flight'] ? ' (the ' + fmt(s.counts['in-flight']) + ' in flight finish)' : '') + '. This cannot be undone.');
    $('cancel-confirm').dataset.unsent = String(unsent);
    $('cancel-confirm').hidden = false;
  });
  $('cancel-confirm-yes').addEventListener('click', () => lifecycle('cancel'));
  $('cancel-confirm-no').addEventListener('click', () => { $('cancel-confirm').hidden = true; });
  $('failed-prev').addEventListener('click', () => {
    if (one.page > 1) { one.page--; refreshCampaign(viewToken).catch((e) => consoleFailure(e, 'campaign-status')); }
  });
  $('failed-next').addEventListener('click', () => {
    one.page++;
    refreshCampaign(viewToken).catch((e) => consoleFailure(e, 'campaign-status'));
  });

  // ---- Dead tokens --------------------------------------------------------------------------

  const dead = { cursor: null };

  $('dead-app').addEventListener('change', () => { dead.cursor = null; showView(); });
  $('dead-first').addEventListener('click', () => { dead.cursor = null; showView(); });
  $('dead-next').addEventListener('click', () => {
    const next = $('dead-list').dataset.next;
    if (next) { dead.cursor = next; showView(); }
  });

  async function openDead(token) {
    const app = $('dead-app').value;
    const base = state.appsFromAPI ? '/v1/apps/' + encodeURIComponent(app) + '/tokens/dead' : '/v1/tokens/dead';
    const path = base + '?limit=50' + (dead.cursor ? '&cursor=' + encodeURIComponent(dead.cursor) : '');
    const table = $('dead-list');
    try {
      const answer = await api('GET', path);
      if (token !== viewToken) return;
      const rows = table.tBodies[0];
      clear(rows);
      if (answer.status !== 200 || !answer.json) {
        setText($('dead-status'), problemLines(answer).join(' '));
        $('dead-status').className = 'error';
      } else {
        for (const t of answer.json.tokens) {
          const row = el('tr', null, el('td', 'token', t.token), el('td', null, app || appName()), el('td', 'reason', t.reason),
            el('td', null, new Date(t.timestamp_ms).toISOString()), el('td', null, t.recorded_at));
          row.dataset.token = t.token;
          rows.append(row);
        }
        setText($('dead-status'), answer.json.tokens.length === 0 ? 'No dead tokens' + (dead.cursor ? ' after this point.' : '.')
          : 'Oldest first, by Apple\u2019s time.');
        $('dead-status').className = '';
        table.dataset.next = answer.json.next_cursor || '';
        $('dead-next').disabled = !answer.json.next_cursor;
        $('dead-first').disabled = !dead.cursor;
      }
      table.dataset.round = String(Number(table.dataset.round) + 1);
    } catch (e) {
      if (token === viewToken) consoleFailure(e, 'dead-status');
    }
  }

  // ---- Start ---------------------------------------------------------------------------------

  async function start() {
    try {
      await loadPushTypes();
      await loadApps();
      fillApps();
      await loadTemplates();
      showKeyHeld();
      fillChoices();
      modeChanged();
      fillConsoleApps();
      setStatus('Compose a notification and press Preview.', '');
      document.body.dataset.ready = 'true';
      showView();
    } catch (e) {
      if (e instanceof NeedsKey) {
        const hadKey = apiKey() !== null;
        sessionStorage.removeItem(KEY_STORAGE);
        showKeyForm(hadKey ? 'The gateway refused the key.' : '');
        document.body.dataset.ready = 'key';
        showView();
      } else {
        setStatus('The gateway could not be reached: ' + String(e && e.message ? e.message : e), 'error');
        document.body.dataset.ready = 'error';
      }
    }
  }

  start();
})();
