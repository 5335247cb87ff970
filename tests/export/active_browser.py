# SPDX-License-Identifier: MIT
"""The active-memory timeline of the HTML report, driven in headless Chromium
through playwright (tests/export/active_browser.sh runs it).

  active_browser.py --browser CHROMIUM [--demo PAGE [--shot PNG]] [--torch PAGE TRUTH] [--gen PAGE GEN_OUT]
  active_browser.py --browser CHROMIUM --bench GEN_ACTIVE N... [--shot PNG]

Test mode checks, with the real mouse: hovering a band shows that
allocation's size, times and stack; a click pins it and brings its site's
table row into view; the wheel zooms in time around the pointer, a drag
pans, a double-click shows the whole run again; and the y scale of the
whole run is the exact peak of live bytes (the demo's, the allocator
double's own accounting, the synthetic run's). Bench mode writes pages of
N allocations with gen_active and prints the load time and the redraw time
after a zoom.
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright

fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" {detail}"))
    if not ok:
        fails += 1


def load(browser, path):
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append("request " + r.url) if not r.url.startswith("file:") else None)
    page.goto("file://" + os.path.abspath(path))
    page.wait_for_function("document.body.dataset.tlmActive !== undefined", timeout=60000)
    check(f"{os.path.basename(path)}: no script error, no request", not errors, errors[:3])
    return page


def figure_of(page, label):
    """Index of the timeline whose heading starts with label."""
    heads = page.eval_on_selector_all("figure.active h3", "hs => hs.map(h => h.textContent)")
    for i, h in enumerate(heads):
        if h.startswith(label):
            return i
    return -1


def tl(i, expr):
    return f"window.tlmActive[{i}].{expr}"


def band_point(page, i, alloc):
    """Page coordinates of a pixel of the allocation's band, or None."""
    p = page.evaluate(tl(i, f"find({alloc})"))
    if not p:
        return None
    r = page.evaluate(f"""(() => {{ const c = document.querySelectorAll('figure.active canvas')[{i}];
        c.scrollIntoView({{block: 'center'}}); const b = c.getBoundingClientRect();
        return [b.left + c.clientLeft, b.top + c.clientTop, c.clientWidth / c.width, c.clientHeight / c.height]; }})()""")
    return r[0] + (p["x"] + 0.5) * r[2], r[1] + (p["y"] + 0.5) * r[3]


def tip(page, i):
    return page.evaluate(f"(() => {{ const t = document.querySelectorAll('figure.active .active-tip')[{i}];"
                         "return t.hidden ? null : t.textContent; })()")


def interact(page, i, alloc, want_tip, full_peak):
    """Hover, pin, zoom, pan and reset on timeline i; alloc must be visible in the whole run."""
    t0, t1 = page.evaluate(tl(i, "range()"))
    check("the whole run's y scale is the exact peak of live bytes",
          page.evaluate(tl(i, "ymax()")) == full_peak, (page.evaluate(tl(i, "ymax()")), full_peak))
    pt = band_point(page, i, alloc)
    check(f"allocation {alloc} is drawn", pt is not None)
    if not pt:
        return
    page.mouse.move(*pt)
    text = tip(page, i) or ""
    check(f"hover: the tip names allocation {alloc}", all(w in text for w in want_tip), (want_tip, text[:300]))
    page.mouse.click(*pt)
    page.wait_for_timeout(500)  # the row comes into view after the double-click delay
    check("click: the allocation is pinned", page.evaluate(tl(i, "pinned()")) == alloc)
    row = page.evaluate(f"""(() => {{ const r = document.querySelectorAll('figure.active')[{i}]
        .querySelector('tr.hit'); if (!r) return null; const b = r.getBoundingClientRect();
        return [r.id, b.top >= 0 && b.bottom <= window.innerHeight]; }})()""")
    check("click: its site's row is marked and in view", bool(row) and row[1], row)
    page.mouse.move(pt[0], pt[1] + 400)
    check("pinned: the tip stays", (tip(page, i) or "").startswith(text.split("\n")[0]))
    pt = band_point(page, i, alloc)
    page.mouse.click(*pt)
    page.wait_for_timeout(50)
    check("a second click unpins", page.evaluate(tl(i, "pinned()")) == -1 and tip(page, i) is None)
    # zoom: three wheel notches in, around the pointer
    box = page.evaluate(f"""(() => {{ const c = document.querySelectorAll('figure.active canvas')[{i}];
        c.scrollIntoView({{block: 'center'}}); const b = c.getBoundingClientRect();
        return [b.left, b.top, b.width, b.height]; }})()""")
    cx, cy = box[0] + box[2] * 0.6, box[1] + box[3] * 0.5
    page.mouse.move(cx, cy)
    for _ in range(3):
        page.mouse.wheel(0, -100)
        page.wait_for_timeout(50)
    v0, v1 = page.evaluate(tl(i, "view()"))
    check("wheel: zoomed in 1.25^3 in time", abs((v1 - v0) * 1.25 ** 3 - (t1 - t0)) <= 1e-6 * (t1 - t0) + 2,
          (v0, v1, t0, t1))
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 200, cy, steps=5)
    page.mouse.up()
    page.wait_for_timeout(50)
    w0, w1 = page.evaluate(tl(i, "view()"))
    check("drag: panned later in time, same span", w0 > v0 and abs((w1 - w0) - (v1 - v0)) < 1e-6 * (t1 - t0) + 2,
          (v0, v1, w0, w1))
    page.mouse.dblclick(cx, cy)
    page.wait_for_timeout(100)
    check("double-click: the whole run again", page.evaluate(tl(i, "view()")) == [t0, t1])


def truth(path):
    t = {}
    for line in open(path):
        p = line.split()
        if len(p) == 3:
            t[p[1]] = float(p[2])
    return t


def test(browser, args):
    if args.demo:
        page = load(browser, args.demo)
        i = figure_of(page, "device 0")
        check("demo: a timeline per device and kind (host pinned, device 0)",
              page.evaluate("window.tlmActive.length") == 2 and i >= 0)
        check("demo: 105 allocations on device 0", page.evaluate(tl(i, "allocations")) == 105)
        # allocation 0: the first weights, 32 MiB from load_weights, never freed
        interact(page, i, 0, ["32.0 MiB (33554432 bytes)", "live at the end", "load_weights"], 494927872)
        # allocation 5: step 0's first activation, freed in the same step
        ta, tf = page.evaluate(tl(i, "times(5)"))
        page.evaluate(tl(i, f"zoom({ta} - 1000, {tf} + 1000)"))
        pt = band_point(page, i, 5)
        if pt:
            page.mouse.move(*pt)
        text = tip(page, i) or ""
        check("zoomed in: hover shows a freed activation from train_step",
              pt is not None and "32.0 MiB" in text and "freed" in text and "train_step" in text, text[:300])
        if args.shot:  # docs/active-timeline.png: around step 10, the pointer on step 10's first activation
            page.mouse.move(0, 0)
            ta, tf = page.evaluate(tl(i, "times(55)"))
            page.evaluate(tl(i, f"zoom({ta} - 30e3, {tf} + 60e3)"))
            pt = band_point(page, i, 55)
            if pt:
                page.mouse.move(*pt)
            box = page.evaluate(f"""(() => {{ const f = document.querySelectorAll('figure.active')[{i}];
                const b = f.getBoundingClientRect(); return [b.left, b.top, b.width]; }})()""")
            page.screenshot(path=args.shot, clip={"x": box[0] - 8, "y": box[1] - 4, "width": box[2] + 16,
                                                  "height": 640})
            print(f"screenshot: {args.shot}")
        page.close()
    if args.torch:
        page = load(browser, args.torch[0])
        i = figure_of(page, "device 1")
        t = truth(args.torch[1])
        check("allocator double: a timeline for device 1", i >= 0)
        if i >= 0:
            check("allocator double: its peak is the allocator's own (max_memory_allocated)",
                  page.evaluate(tl(i, "ymax()")) == t["peak_allocated"])
        page.close()
    if args.gen:
        out = open(args.gen[1]).read().split()
        want = dict(zip(out[::2], map(int, out[1::2])))
        page = load(browser, args.gen[0])
        ms = page.evaluate("window.tlmActiveDone")
        check(f"synthetic: {want['allocations']} allocations",
              page.evaluate(tl(0, "allocations")) == want["allocations"])
        interact(page, 0, 0, ["8.0 MiB (8388608 bytes)", "live at the end"], want["peak"])
        t0, t1 = page.evaluate(tl(0, "range()"))
        zooms = [page.evaluate(tl(0, f"zoom({t0 + (t1 - t0) * a}, {t0 + (t1 - t0) * (a + 0.1)})"))
                 for a in (0.1, 0.3, 0.5, 0.7)]
        print(f"synthetic {want['allocations']}: load {ms:.0f} ms, redraw after zoom {statistics.median(zooms):.1f} ms")
        check("synthetic: loads within 10 s, redraws within 1 s", ms < 10000 and max(zooms) < 1000, (ms, zooms))
        page.close()


def bench(browser, args):
    work = tempfile.mkdtemp(prefix="tlm-active-bench-")
    print("allocations  page MiB  load ms  redraw ms (zoom, median of 20)  redraw ms (whole run, not cached)")
    for n in args.bench[1:]:
        path = os.path.join(work, f"gen{n}.html")
        subprocess.run([args.bench[0], n, path], check=True, stdout=subprocess.DEVNULL)
        loads, zooms, fulls = [], [], []
        for rep in range(3):
            page = load(browser, path)
            loads.append(page.evaluate("window.tlmActiveDone"))
            t0, t1 = page.evaluate(tl(0, "range()"))
            rnd = random.Random(rep)
            for _ in range(20 if rep == 0 else 0):
                w = (t1 - t0) * rnd.uniform(0.01, 0.5)
                a = t0 + rnd.uniform(0, (t1 - t0) - w)
                zooms.append(page.evaluate(tl(0, f"zoom({a}, {a + w})")))
            fulls.append(page.evaluate(tl(0, f"zoom({t0} + 1, {t1})")))
            if args.shot and rep == 0 and n == args.bench[1]:
                page.evaluate(tl(0, "reset()"))
                pt = band_point(page, 0, 60)
                if pt:
                    page.mouse.move(*pt)
                page.locator("figure.active").first.screenshot(path=args.shot)
            page.close()
        print(f"{int(n):>11}  {os.path.getsize(path) / 2**20:8.1f}  {statistics.median(loads):7.0f}  "
              f"{statistics.median(zooms):10.1f}  {statistics.median(fulls):10.1f}")
        os.remove(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--browser", required=True)
    ap.add_argument("--demo")
    ap.add_argument("--torch", nargs=2)
    ap.add_argument("--gen", nargs=2)
    ap.add_argument("--bench", nargs="+")
    ap.add_argument("--shot")
    args = ap.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.browser, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        if args.bench:
            bench(browser, args)
        else:
            test(browser, args)
        browser.close()
    if not args.bench:
        print(f"{1 if not fails else 0} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


sys.exit(main())
