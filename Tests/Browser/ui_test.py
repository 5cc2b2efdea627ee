"""Browser tests of the /ui preview page, in Debian's headless Chromium driven by Selenium.

Started by Tests/PushgateCLITests/PreviewPageBrowserTests.swift, which runs two pushgate
servers on ephemeral loopback ports (one open, one with an API key) and passes:

    ui_test.py --open URL --keyed URL --key KEY --artifacts DIR

One browser session runs every case. For each case the page's rendering is compared with
the preview API's own answer, fetched here with urllib. Prints one JSON line per case and
a closing `N passed, N failed` line; exits 0 only if every case passed.
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

SAMPLE_VALUES = {
    "product_id": "42",
    "order_id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
    "store_name": "Kraków Rynek 12",
    "product_name": "Trail Runner 3",
    "new_price": "$89",
}
DEVICE = "8a2f0c1d9e4b7f3a2c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3"
# Every way text could turn into markup or script, plus bidi overrides and U+2028.
HOSTILE = ('<script>window.__pwned="script";document.title="pwned"</script>'
           '"><img src=x onerror="window.__pwned=\'img\'">'
           "\u202eevil\u202c \u2028next line </pre><b>bold</b>")
EXPECTED_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
                "require-trusted-types-for 'script'; trusted-types 'none'")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def equal(actual, expected, what):
    if actual != expected:
        raise Failure(f"{what}: page shows {actual!r}, the API says {expected!r}")


class API:
    def __init__(self, base, key=None):
        self.base = base
        self.key = key

    def call(self, method, path, body=None):
        data = None if body is None else (body if isinstance(body, bytes) else body.encode("utf-8"))
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.key:
            request.add_header("Authorization", "Bearer " + self.key)
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, method, path, body=None):
        status, _, raw = self.call(method, path, body)
        return status, json.loads(raw)


class Page:
    """The /ui page in the browser, read through small scripts (never through its HTML)."""

    def __init__(self, driver, base):
        self.driver = driver
        self.base = base

    def open(self, expect_ready="true"):
        self.driver.get(self.base + "/ui")
        WebDriverWait(self.driver, 20).until(lambda d: d.execute_script("return document.body.dataset.ready || ''") != "")
        ready = self.driver.execute_script("return document.body.dataset.ready")
        check(ready == expect_ready, f"page start: ready={ready!r}, expected {expect_ready!r}; status: {self.text('status')!r}")

    def text(self, element_id):
        return self.driver.execute_script("const e = document.getElementById(arguments[0]); return e ? e.textContent : null", element_id)

    def set_value(self, element_id, value):
        # Typed values go through the DOM property, as a paste would; send_keys cannot type U+2028.
        self.driver.execute_script(
            "const e = document.getElementById(arguments[0]); e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));",
            element_id, value)

    def choose(self, element_id, value):
        Select(self.driver.find_element(By.ID, element_id)).select_by_value(value)

    def mode(self, value):
        self.driver.find_element(By.ID, "mode-" + value).click()

    def preview(self):
        before = int(self.driver.execute_script("return document.getElementById('results').dataset.round"))
        self.driver.find_element(By.ID, "preview-button").click()
        WebDriverWait(self.driver, 30).until(lambda d: int(d.execute_script(
            "return document.getElementById('results').dataset.round")) > before)
        return self.driver.execute_script("return document.getElementById('results').dataset.state")

    def rendering(self):
        return self.driver.execute_script("""
            const lines = (root, field) => root ? Array.from(root.querySelectorAll('.text.' + field + ' .line')).map(e => e.textContent) : [];
            const card = (root) => ({title: lines(root, 'title'), subtitle: lines(root, 'subtitle'), body: lines(root, 'body'),
                                      app: root ? root.querySelector('.app').textContent : null});
            const out = {};
            for (const scheme of ['light', 'dark']) {
              const col = document.querySelector('.appearance.' + scheme);
              out[scheme] = col ? {lock: card(col.querySelector('.phone.lock .card')), banner: card(col.querySelector('.phone.banner .card')),
                                   center: card(col.querySelector('.phone.center .card')),
                                   groups: Array.from(col.querySelectorAll('.phone.center .group')).map(g => Number(g.dataset.count))} : null;
            }
            out.warnings = Array.from(document.querySelectorAll('#warnings li.warning')).map(e => e.textContent);
            out.problems = Array.from(document.querySelectorAll('#problems li')).map(e => e.textContent);
            out.size = document.getElementById('size-label').textContent;
            out.canonical = (document.getElementById('link-canonical') || {}).textContent || null;
            out.route = (document.getElementById('link-route') || {}).textContent || null;
            out.rejected = (document.getElementById('link-rejected') || {}).textContent || null;
            out.head = document.getElementById('request-head').textContent;
            out.body = document.getElementById('request-body').textContent;
            out.campaign = document.getElementById('sent-campaign').textContent;
            out.locales = Array.from(document.querySelectorAll('#locales .locale')).map(box => ({
              tag: box.dataset.locale, sources: (box.querySelector('.sources') || {}).textContent || null,
              card: card(box.querySelector('.card'))}));
            out.approximation = document.getElementById('approximation').textContent;
            return out;
        """)

    def nothing_executed(self, what):
        state = self.driver.execute_script("""
            return {pwned: window.__pwned === undefined ? null : String(window.__pwned), title: document.title,
                    foreign: Array.from(document.querySelectorAll('img, iframe, object, embed, svg, b, script'))
                               .filter(e => !(e.tagName === 'SCRIPT' && e.getAttribute('src') === '/ui/page.js'))
                               .map(e => e.tagName)};
        """)
        check(state["pwned"] is None, f"{what}: hostile script ran ({state['pwned']})")
        check(state["title"] == "pushgate · notification preview", f"{what}: the document title changed to {state['title']!r}")
        check(state["foreign"] == [], f"{what}: elements made from text: {state['foreign']}")
        for entry in self.driver.get_log("browser"):
            message = entry.get("message", "")
            check("Content Security Policy" not in message and "Trusted Type" not in message and "TrustedHTML" not in message,
                  f"{what}: the browser blocked something: {message}")


def compare_with_api(page, api, what):
    """The page's rendering of its last preview against the API's answer to the same campaign."""
    shown = page.rendering()
    campaign = shown["campaign"]
    status, answer = api.json("POST", "/v1/notifications/preview", campaign)
    check(status == 200, f"{what}: the API answered {status} to the page's campaign: {answer}")
    first = answer["requests"][0]
    alert = first["alert"]
    for scheme in ["light", "dark"]:
        for place in ["lock", "banner", "center"]:
            for field in ["title", "subtitle", "body"]:
                expected = alert[field]["lines"] if alert and alert[field] else []
                equal(shown[scheme][place][field], expected, f"{what}: {scheme} {place} {field}")
    equal(shown["warnings"], [w["message"] for w in first["warnings"]], f"{what}: warnings")
    check(f"{first['size']} of {first['limit']} bytes" in shown["size"], f"{what}: size {shown['size']!r} vs {first['size']}/{first['limit']}")
    check(first["size"] == len(first["body_text"].encode("utf-8")), f"{what}: size is not the body's byte count")
    equal(shown["body"], first["body_text"], f"{what}: body")
    for name, value in first["headers"].items():
        if name != "apns-id":
            check(f"{name}: {value}" in shown["head"].split("\n"), f"{what}: header {name}: {value} missing from {shown['head']!r}")
    if first["link"]:
        equal(shown["canonical"], first["link"]["canonical"], f"{what}: canonical link")
        equal(shown["route"], first["link"]["route"], f"{what}: route")
    check("approximation of iOS" in shown["approximation"], f"{what}: the page does not say it is an approximation")
    return shown, answer


def template_cases(page, api, artifacts, templates):
    names = []
    for template in templates:
        for tag in [""] + template["locales"]:
            what = f"template {template['name']} locale {tag or 'default'}"
            page.mode("template")
            page.choose("template", template["name"])
            page.choose("locale", tag)
            for variable in template["variables"]:
                page.set_value("var-" + variable["name"], SAMPLE_VALUES.get(variable["name"], "Sample"))
            page.set_value("deeplink", "")
            page.set_value("device", DEVICE)
            state = page.preview()
            check(state == "ready", f"{what}: state {state}, problems {page.rendering()['problems']}")
            shown, answer = compare_with_api(page, api, what)
            sent = json.loads(shown["campaign"])
            equal(sent.get("template"), template["name"], f"{what}: campaign template")
            equal(sent.get("locale", ""), tag, f"{what}: campaign locale")
            # Every locale side by side, each as the API renders it.
            equal([box["tag"] for box in shown["locales"]], [""] + template["locales"], f"{what}: locale columns")
            for box in shown["locales"]:
                variant = dict(sent)
                variant.pop("locale", None)
                if box["tag"]:
                    variant["locale"] = box["tag"]
                _, other = api.json("POST", "/v1/notifications/preview", json.dumps(variant))
                entry = other["requests"][0]
                expected = " · ".join(f"{f} from {entry['alert'][f]['source']}" for f in ["title", "subtitle", "body"] if entry["alert"][f])
                equal(box["sources"], expected, f"{what}: sources of locale {box['tag'] or 'default'}")
                equal(box["card"]["title"], entry["alert"]["title"]["lines"] if entry["alert"]["title"] else [], f"{what}: locale {box['tag']} title")
                equal(box["card"]["body"], entry["alert"]["body"]["lines"], f"{what}: locale {box['tag']} body")
            shot = os.path.join(artifacts, f"lock-{template['name']}-{tag or 'default'}.png")
            page.driver.find_element(By.CSS_SELECTOR, ".appearance.light .phone.lock").screenshot(shot)
            check(os.path.getsize(shot) > 1000, f"{what}: empty screenshot")
            page.nothing_executed(what)
            names.append(what)
    return names


def inline_cut_and_rejected_link(page, api, artifacts):
    what = "inline text cut on screen, rejected link"
    page.mode("inline")
    page.set_value("title", "Spring sale: everything in the outdoor collection is now thirty percent off")
    page.set_value("subtitle", "")
    page.set_value("body", "Jackets, boots and tents. " * 12)
    page.set_value("deeplink", "https://example.com/%2e%2e/admin")
    page.choose("push-type", "alert")
    page.set_value("device", DEVICE)
    state = page.preview()
    check(state == "rejected", f"{what}: a campaign with a rejected link was {state}")
    shown = page.rendering()
    _, link = api.json("POST", "/v1/links/check", json.dumps({"link": "https://example.com/%2e%2e/admin"}))
    equal(shown["rejected"], f"Rejected: {link['error']['code']} — {link['error']['message']}", f"{what}: link rejection")
    page.set_value("deeplink", "shop://product/42?ref=spring-sale")
    state = page.preview()
    check(state == "ready", f"{what}: state {state}")
    shown, answer = compare_with_api(page, api, what)
    codes = [w["code"] for w in answer["requests"][0]["warnings"]]
    check(codes == ["cutOnScreen", "cutOnScreen"], f"{what}: warnings {codes}")
    check(shown["light"]["lock"]["body"][-1].endswith("…"), f"{what}: the cut body does not end in …")
    equal(shown["route"], "product", f"{what}: route")
    page.driver.find_element(By.CSS_SELECTOR, "#results").screenshot(os.path.join(artifacts, "ui-inline-cut.png"))
    return [what]


def voip_and_copy(page, api):
    what = "voip push: its 5120-byte limit, no alert, no Simulator file; copy buttons"
    page.mode("json")
    page.set_value("campaign-json", json.dumps({"push_type": "voip", "data": {"call_id": "c-42"}, "devices": [DEVICE]}))
    check(page.preview() == "ready", f"{what}: {page.rendering()['problems']}")
    shown, answer = compare_with_api(page, api, what)
    check(answer["requests"][0]["limit"] == 5120 and "of 5120 bytes" in shown["size"], f"{what}: size {shown['size']!r}")
    text = page.driver.execute_script("return document.querySelector('.appearance.light .phone.lock .card .text.none').textContent")
    check("nothing is shown on screen" in text, f"{what}: {text!r}")
    check(page.driver.execute_script("return document.getElementById('download-apns').disabled"), f"{what}: download offered")
    # Copy: the clipboard gets exactly the body shown.
    page.driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": page.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    page.driver.find_element(By.ID, "copy-body").click()
    WebDriverWait(page.driver, 10).until(lambda d: d.execute_script("return document.getElementById('copy-message').textContent") != "")
    equal(page.text("copy-message"), "Body copied.", f"{what}: copy message")
    copied = page.driver.execute_async_script("const done = arguments[0]; navigator.clipboard.readText().then(done, e => done('error: ' + e));")
    equal(copied, answer["requests"][0]["body_text"], f"{what}: clipboard")
    return [what]


def campaign_json_and_download(page, api, artifacts, campaign_path):
    what = "pasted campaign JSON, grouped by thread, .apns download"
    with open(campaign_path, encoding="utf-8") as f:
        text = f.read()
    page.mode("json")
    page.set_value("campaign-json", text)
    state = page.preview()
    check(state == "ready", f"{what}: state {state}")
    shown, answer = compare_with_api(page, api, what)
    equal(shown["campaign"], text, f"{what}: the campaign sent is the one pasted")
    equal(shown["light"]["groups"], [answer["shown"]], f"{what}: Notification Center groups")
    downloads = os.path.join(artifacts, "downloads")
    os.makedirs(downloads, exist_ok=True)
    page.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    simulator = answer["requests"][0]["simulator"]
    target = os.path.join(downloads, simulator["file_name"])
    if os.path.exists(target):
        os.remove(target)
    page.driver.find_element(By.ID, "download-apns").click()
    deadline = time.time() + 20
    while time.time() < deadline and not os.path.exists(target):
        time.sleep(0.1)
    check(os.path.exists(target), f"{what}: {simulator['file_name']} was not downloaded")
    time.sleep(0.2)
    with open(target, encoding="utf-8") as f:
        equal(f.read(), simulator["contents"], f"{what}: the .apns file")
    return [what]


def hostile_cases(page, api):
    names = []
    # 1. Hostile alert texts that the gateway accepts: shown as the API's lines, nothing runs.
    what = "hostile inline texts"
    page.mode("inline")
    for field in ["title", "subtitle", "body"]:
        page.set_value(field, HOSTILE)
    page.set_value("deeplink", "")
    page.set_value("device", DEVICE)
    check(page.preview() == "ready", f"{what}: not accepted: {page.rendering()['problems']}")
    shown, answer = compare_with_api(page, api, what)
    check("\u202e" in "".join(shown["light"]["lock"]["body"]), f"{what}: the bidi override was dropped")
    check(any(line.startswith("next line") for line in answer["requests"][0]["alert"]["body"]["lines"]), f"{what}: U+2028 did not break the line")
    page.nothing_executed(what)
    names.append(what)

    # 2. Every field hostile, including the link and the device: refused, every problem shown as text.
    what = "hostile fields refused"
    page.set_value("deeplink", HOSTILE)
    page.set_value("device", HOSTILE)
    check(page.preview() == "rejected", f"{what}: accepted")
    shown = page.rendering()
    _, problem = api.json("POST", "/v1/notifications/preview", shown["campaign"])
    expected = [f"{e['pointer']}: {e['detail']} [{e['code']}]" for e in problem["errors"]]
    equal(shown["problems"], expected, f"{what}: problems")
    check(shown["rejected"] is not None, f"{what}: the link rejection is not shown")
    page.nothing_executed(what)
    names.append(what)

    # 3. Hostile variable values in a template, and the hostile template itself.
    what = "hostile template and variables"
    page.mode("template")
    page.choose("template", "hostile")
    page.choose("locale", "pl")
    description = page.text("template-description")
    _, listing = api.json("GET", "/v1/templates")
    hostile = next(t for t in listing["templates"] if t["name"] == "hostile")
    equal(description, hostile["description"], f"{what}: description")
    hints = page.driver.execute_script("return Array.from(document.querySelectorAll('#variable-list .hint')).map(e => e.textContent)")
    equal(hints, [v["description"] for v in hostile["variables"]], f"{what}: variable descriptions")
    for variable in hostile["variables"]:
        page.set_value("var-" + variable["name"], HOSTILE)
    page.set_value("deeplink", "")
    page.set_value("device", DEVICE)
    check(page.preview() == "ready", f"{what}: not accepted: {page.rendering()['problems']}")
    compare_with_api(page, api, what)
    page.nothing_executed(what)
    names.append(what)

    # 4. A pasted campaign with hostile text everywhere it may go.
    what = "hostile campaign JSON"
    page.mode("json")
    campaign = {"alert": {"title": HOSTILE, "body": HOSTILE}, "thread_id": "t<script>", "category": "<img src=x onerror=1>",
                "data": {"note": HOSTILE}, "devices": [DEVICE]}
    page.set_value("campaign-json", json.dumps(campaign))
    check(page.preview() == "ready", f"{what}: not accepted: {page.rendering()['problems']}")
    compare_with_api(page, api, what)
    thread = page.driver.execute_script("return document.querySelector('.appearance.light .phone.center .thread').textContent")
    equal(thread, "thread t<script>", f"{what}: thread label")
    page.set_value("campaign-json", json.dumps({"template": "order_ready", "locale": HOSTILE, "variables": {"order_id": HOSTILE},
                                                "devices": [DEVICE]}))
    state = page.preview()
    shown = page.rendering()
    status, problem = api.json("POST", "/v1/notifications/preview", shown["campaign"])
    check(state == "rejected" and status == 422, f"{what}: a hostile locale and order id were {state}")
    equal(shown["problems"], [f"{e['pointer']}: {e['detail']} [{e['code']}]" for e in problem["errors"]], f"{what}: problems")
    page.nothing_executed(what + " (locale)")
    page.set_value("campaign-json", '{"alert": {"body": "' + HOSTILE.replace('"', '\\"') + '"}, "devices": [')
    check(page.preview() == "rejected", f"{what}: broken JSON accepted")
    page.nothing_executed(what)
    names.append(what)
    return names


def keyed_cases(page, key):
    names = []
    what = "API key asked for, kept in sessionStorage only"
    page.open(expect_ready="key")
    check(page.driver.execute_script("return !document.getElementById('key-form').hidden"), f"{what}: no key form")
    page.driver.find_element(By.ID, "key-input").send_keys("wrong-" + key)
    page.driver.find_element(By.ID, "key-use").click()
    WebDriverWait(page.driver, 20).until(lambda d: "refused" in (d.execute_script("return document.getElementById('key-message').textContent") or ""))
    check(page.driver.execute_script("return sessionStorage.length") == 0, f"{what}: a refused key was kept")
    page.set_value("key-input", HOSTILE)
    page.driver.find_element(By.ID, "key-use").click()
    WebDriverWait(page.driver, 20).until(lambda d: "printable ASCII" in d.execute_script("return document.getElementById('key-message').textContent"))
    check(page.driver.execute_script("return sessionStorage.length") == 0, f"{what}: a hostile key was kept")
    page.set_value("key-input", "")
    page.nothing_executed(what + " (hostile key)")
    page.driver.find_element(By.ID, "key-input").send_keys(key)
    page.driver.find_element(By.ID, "key-use").click()
    WebDriverWait(page.driver, 20).until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
    storage = page.driver.execute_script(
        "return {session: sessionStorage.getItem('pushgate.apiKey'), local: localStorage.length, cookie: document.cookie}")
    equal(storage, {"session": key, "local": 0, "cookie": ""}, f"{what}: storage")
    page.mode("template")
    page.choose("template", "order_ready")
    for name in ["order_id", "store_name"]:
        page.set_value("var-" + name, SAMPLE_VALUES[name])
    check(page.preview() == "ready", f"{what}: the preview failed behind authentication")
    compare_with_api(page, API(page.base, key), what)
    names.append(what)
    # A new tab session (a new browser context) starts without the key.
    page.driver.delete_all_cookies()
    page.driver.execute_script("sessionStorage.clear()")
    page.open(expect_ready="key")
    names.append("a cleared session asks again")
    return names


def headers_case(base):
    names = []
    api = API(base)
    for path, kind in [("/ui", "text/html"), ("/ui/page.js", "text/javascript"), ("/ui/page.css", "text/css")]:
        status, headers, _ = api.call("GET", path)
        lower = {k.lower(): v for k, v in headers.items()}
        check(status == 200, f"{path}: status {status}")
        check(lower.get("content-type", "").startswith(kind), f"{path}: content type {lower.get('content-type')}")
        equal(lower.get("content-security-policy"), EXPECTED_CSP, f"{path}: Content-Security-Policy")
        equal(lower.get("x-content-type-options"), "nosniff", f"{path}: nosniff")
        names.append(f"headers of {path}")
    return names


def headless_chromium(chromium, chromedriver):
    """Chromium as every browser test drives it: headless, a tall window, its console kept."""
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,2600",
                 "--lang=en-US", "--no-first-run", "--disable-extensions", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--no-default-browser-check"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_page_load_timeout(30)
    return driver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--open", required=True)
    parser.add_argument("--keyed", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--campaign", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    os.makedirs(args.artifacts, exist_ok=True)
    # `timeout` (the Swift side's deadline) sends SIGTERM: quit the browser on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))

    driver = headless_chromium(args.chromium, args.chromedriver)

    passed, failed = [], []

    def run(label, body):
        try:
            names = body()
            for name in names:
                print(json.dumps({"case": name, "ok": True}), flush=True)
            passed.extend(names)
        except Exception as error:  # a failed check or a browser error: report it and go on
            detail = str(error) if isinstance(error, Failure) else traceback.format_exc()
            print(json.dumps({"case": label, "ok": False, "error": detail}), flush=True)
            failed.append(label)

    try:
        run("headers", lambda: headers_case(args.open))
        open_page = Page(driver, args.open)
        open_api = API(args.open)
        _, listing = open_api.json("GET", "/v1/templates")
        shipped = [t for t in listing["templates"] if t["name"] != "hostile"]

        def templates():
            open_page.open()
            return template_cases(open_page, open_api, args.artifacts, shipped)
        run("templates", templates)
        run("inline", lambda: inline_cut_and_rejected_link(open_page, open_api, args.artifacts))
        run("campaign json", lambda: campaign_json_and_download(open_page, open_api, args.artifacts, args.campaign))
        run("voip", lambda: voip_and_copy(open_page, open_api))

        def hostile():
            open_page.open()
            return hostile_cases(open_page, open_api)
        run("hostile", hostile)

        def example():
            # The picture the README shows: order_ready in Polish (pl-PL), light and dark.
            open_page.open()
            open_page.mode("template")
            open_page.choose("template", "order_ready")
            open_page.choose("locale", "pl-PL")
            for name in ["order_id", "store_name"]:
                open_page.set_value("var-" + name, SAMPLE_VALUES[name])
            check(open_page.preview() == "ready", "example: preview failed")
            driver.find_element(By.ID, "appearances").screenshot(os.path.join(args.artifacts, "ui-example.png"))
            driver.save_screenshot(os.path.join(args.artifacts, "ui-page.png"))
            return ["example screenshots"]
        run("example", example)
        run("keyed", lambda: keyed_cases(Page(driver, args.keyed), args.key))
    finally:
        driver.quit()

    print(f"{len(passed)} passed, {len(failed)} failed", flush=True)
    return 0 if not failed and passed else 1


if __name__ == "__main__":
    sys.exit(main())
