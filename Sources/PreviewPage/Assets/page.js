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

  async function api(method, path, body) {
    const headers = { 'Accept': 'application/json' };
    const key = apiKey();
    if (key) headers['Authorization'] = 'Bearer ' + key;
    const init = { method, headers, credentials: 'omit', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
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
  function card(entry, pushType) {
    const name = appName();
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
      setStatus('Compose a notification and press Preview.', '');
      document.body.dataset.ready = 'true';
    } catch (e) {
      if (e instanceof NeedsKey) {
        const hadKey = apiKey() !== null;
        sessionStorage.removeItem(KEY_STORAGE);
        showKeyForm(hadKey ? 'The gateway refused the key.' : '');
        document.body.dataset.ready = 'key';
      } else {
        setStatus('The gateway could not be reached: ' + String(e && e.message ? e.message : e), 'error');
        document.body.dataset.ready = 'error';
      }
    }
  }

  start();
})();
