// SPDX-License-Identifier: MIT
// job_timeline.js - the job report's merged timeline (src/job/job_html.c
// writes the data; docs/job.md describes the page). One canvas, as tall as
// its scroll box, draws only the tracks in view, so a job of thousands of
// processes costs what its visible rows cost. The view in time is shared
// by every track: wheel zooms around the pointer, drag pans, double-click
// shows the whole job. Hover reads the exact values: within a pixel of the
// pointer, the point with the most reserved bytes (so a spike shows its
// peak), else the level at that moment.
(function () {
  'use strict';
  var body = document.body;
  var el = document.getElementById('tlm-job-data');
  if (!el) {
    body.setAttribute('data-tlm-tracks', '0');
    body.setAttribute('data-tlm-ready', '1');
    return;
  }
  var data = JSON.parse(el.textContent);
  var AXIS = 26, RH = 38, PH = 26, LW = 250, PADR = 14, MAXH = 640;

  function bytesOf(s) {
    var bin = atob(s), b = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
    return b;
  }
  // zigzag varints as exact Numbers (below 2^53): no 32-bit bit operations
  function decode(tr) {
    var b = bytesOf(tr.d), pos = 0, n = tr.n;
    var t = new Float64Array(n), r = new Float64Array(n), a = new Float64Array(n);
    function sv() {
      var v = 0, m = 1, c;
      do { c = b[pos++]; v += (c & 127) * m; m *= 128; } while (c & 128);
      return v % 2 ? -(v + 1) / 2 : v / 2;
    }
    var ct = tr.start, cr = 0, ca = 0;
    for (var k = 0; k < n; k++) {
      ct += sv();
      var dr = sv();
      cr += dr; ca += dr + sv(); // allocated: its change less reserved's
      t[k] = ct; r[k] = cr; a[k] = ca;
    }
    var last = n ? t[n - 1] : tr.start;
    return {name: tr.name, sub: tr.sub, proc: tr.proc, pid: tr.pid, device: tr.device, start: tr.start,
            from: tr.start + tr.first, to: Math.max(tr.start + tr.end, last), peakReserved: tr.peak_reserved,
            peakAllocated: tr.peak_allocated, t: t, r: r, a: a, ooms: tr.ooms, oomsTotal: tr.ooms_total};
  }
  var T = data.tracks.map(decode);
  var END = Math.max(1, data.end);
  var ymaxAll = 1;
  T.forEach(function (tr) { ymaxAll = Math.max(ymaxAll, tr.peakReserved, tr.peakAllocated); });

  var scroll = document.getElementById('jt-scroll'), canvas = document.getElementById('jt-canvas');
  var spacer = document.getElementById('jt-spacer'), readout = document.getElementById('jt-readout');
  var bar = document.getElementById('jt-bar'), ctx = canvas.getContext('2d');
  var total = AXIS + T.length * RH, VH = Math.min(total, MAXH), W = 0;
  var v0 = 0, v1 = END, shared = true, cursorX = -1, drawn = 0;
  scroll.style.height = VH + 2 + 'px';
  spacer.style.height = total - VH + 'px';

  function human(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0;
    while (b >= 1023.95 && i < u.length - 1) { b /= 1024; i++; }
    return i ? b.toFixed(1) + ' ' + u[i] : b + ' B';
  }
  function secs(ns) { return (ns < 0 ? '-' : '+') + (Math.abs(ns) / 1e9).toFixed(9) + ' s'; }
  function plotW() { return Math.max(10, W - LW - PADR); }
  function xOf(t) { return LW + (t - v0) / (v1 - v0) * plotW(); }
  function tOf(x) { return v0 + (x - LW) / plotW() * (v1 - v0); }
  function rowTop(k) { return AXIS + k * RH - scroll.scrollTop; }
  // the last point at or before t (-1: none)
  function at(tr, t) {
    var lo = 0, hi = tr.t.length - 1, k = -1;
    while (lo <= hi) { var m = (lo + hi) >> 1; if (tr.t[m] <= t) { k = m; lo = m + 1; } else hi = m - 1; }
    return k;
  }

  function resize() {
    W = scroll.clientWidth;
    var dpr = window.devicePixelRatio || 1;
    canvas.style.width = W + 'px';
    canvas.style.height = VH + 'px';
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(VH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  function steps(tr, vals, y0, ys, fill) {
    var xs = Math.max(LW, xOf(tr.from)), xe = Math.min(LW + plotW(), xOf(tr.to));
    if (xe < LW || xs > LW + plotW()) return;
    var j = at(tr, v0), level = j >= 0 ? vals[j] : 0, n = tr.t.length;
    ctx.beginPath();
    ctx.moveTo(xs, y0);
    ctx.lineTo(xs, ys(level));
    for (var k = j + 1; k < n && tr.t[k] <= v1; k++) {
      var x = Math.max(xs, Math.min(xe, xOf(tr.t[k])));
      ctx.lineTo(x, ys(level));
      level = vals[k];
      ctx.lineTo(x, ys(level));
    }
    ctx.lineTo(xe, ys(level));
    if (fill) {
      ctx.lineTo(xe, y0);
      ctx.fillStyle = 'rgba(9,105,218,0.18)';
      ctx.fill();
      ctx.strokeStyle = '#0969da';
    } else {
      ctx.strokeStyle = '#bf8700';
      ctx.setLineDash([4, 3]); // dashed, as on the per-trace page: reserved shows where they are equal
    }
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.setLineDash([]);
  }

  function drawTrack(k) {
    var tr = T[k], top = rowTop(k), y0 = top + 6 + PH;
    var ymax = shared ? ymaxAll : Math.max(1, tr.peakReserved, tr.peakAllocated);
    function ys(v) { return y0 - v / ymax * PH; }
    ctx.fillStyle = k % 2 ? '#fbfcfd' : '#fff';
    ctx.fillRect(0, top, W, RH);
    ctx.fillStyle = '#1b1f24';
    ctx.font = '600 12px system-ui,sans-serif';
    ctx.fillText(tr.name, 6, top + 15, LW - 12);
    ctx.fillStyle = '#6e7781';
    ctx.font = '11px system-ui,sans-serif';
    ctx.fillText(tr.sub + ', peak ' + human(tr.peakReserved), 6, top + 30, LW - 12);
    ctx.fillStyle = '#f6f8fa';
    ctx.fillRect(LW, top + 6, plotW(), PH);
    steps(tr, tr.r, y0, ys, true);
    steps(tr, tr.a, y0, ys, false);
    ctx.strokeStyle = '#cf222e';
    ctx.fillStyle = '#cf222e';
    tr.ooms.forEach(function (o) {
      var x = xOf(tr.start + o[0]);
      if (x < LW || x > LW + plotW()) return;
      ctx.beginPath(); ctx.moveTo(x, top + 6); ctx.lineTo(x, y0); ctx.lineWidth = 1.5; ctx.stroke();
      ctx.beginPath(); ctx.moveTo(x - 4, top + 2); ctx.lineTo(x + 4, top + 2); ctx.lineTo(x, top + 8); ctx.fill();
    });
    ctx.strokeStyle = '#eaeef2';
    ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(0, top + RH - 0.5); ctx.lineTo(W, top + RH - 0.5); ctx.stroke();
  }

  function axis() {
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, AXIS);
    var span = (v1 - v0) / 1e9, raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * p; }).filter(function (s) { return s >= raw; })[0];
    var dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    ctx.font = '11px system-ui,sans-serif';
    ctx.fillStyle = '#57606a';
    ctx.textAlign = 'center';
    for (var s = Math.ceil(v0 / 1e9 / step) * step; s * 1e9 <= v1; s += step) {
      var x = xOf(s * 1e9);
      ctx.fillText('+' + s.toFixed(dec) + ' s', x, 16);
      ctx.fillStyle = '#d0d7de';
      ctx.fillRect(x, AXIS - 5, 1, 5);
      ctx.fillStyle = '#57606a';
    }
    ctx.textAlign = 'left';
    ctx.fillText('job clock', 6, 16);
    ctx.fillStyle = '#d0d7de';
    ctx.fillRect(0, AXIS - 1, W, 1);
  }

  function draw() {
    ctx.clearRect(0, 0, W, VH);
    ctx.save();
    ctx.beginPath(); ctx.rect(0, AXIS, W, VH - AXIS); ctx.clip();
    var first = Math.max(0, Math.floor(scroll.scrollTop / RH)), k;
    drawn = 0;
    for (k = first; k < T.length && rowTop(k) < VH; k++) { drawTrack(k); drawn++; }
    if (cursorX >= LW) {
      ctx.fillStyle = 'rgba(87,96,106,0.7)';
      ctx.fillRect(Math.round(cursorX), AXIS, 1, VH - AXIS);
    }
    ctx.restore();
    axis();
    body.setAttribute('data-tlm-drawn', String(drawn));
  }

  // What the pointer is on: {track, text} or null.
  function probe(mx, my) {
    if (mx < LW || mx > LW + plotW() || my < AXIS) return null;
    var k = Math.floor((my - AXIS + scroll.scrollTop) / RH);
    if (k < 0 || k >= T.length) return null;
    var tr = T[k], t = tOf(mx);
    for (var i = 0; i < tr.ooms.length; i++) {
      var o = tr.ooms[i];
      if (Math.abs(xOf(tr.start + o[0]) - mx) <= 3)
        return {track: k, text: tr.name + ': OOM at ' + secs(tr.start + o[0]) + ' on device ' + o[3] + ': ' +
                human(o[1]) + ' (' + o[1] + ' bytes) requested, ' + human(o[2]) + ' (' + o[2] +
                ' bytes) free on the device'};
    }
    var ta = tOf(mx - 1), tb = tOf(mx + 1), best = -1; // the pixel under the pointer, either way
    for (var j = Math.max(0, at(tr, ta)); j < tr.t.length && tr.t[j] < tb; j++)
      if (tr.t[j] >= ta && (best < 0 || tr.r[j] > tr.r[best])) best = j;
    if (best < 0) {
      if (tb < tr.from || ta > tr.to) return {track: k, text: tr.name + ': not running at ' + secs(t)};
      best = at(tr, t);
    }
    var r = best >= 0 ? tr.r[best] : 0, a = best >= 0 ? tr.a[best] : 0, when = best >= 0 ? tr.t[best] : t;
    return {track: k, text: tr.name + ': ' + secs(when) + '  reserved ' + human(r) + ' (' + r + ' bytes)  allocated ' +
            human(a) + ' (' + a + ' bytes)'};
  }

  function setView(a, b) {
    var span = Math.max(100, Math.min(END, b - a));
    a = Math.max(0, Math.min(END - span, a));
    v0 = a; v1 = a + span;
    draw();
  }

  var drag = null;
  function local(e) { var r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
  canvas.addEventListener('mousemove', function (e) {
    var p = local(e);
    if (drag) {
      var dt = (p[0] - drag.x) / plotW() * (drag.v1 - drag.v0);
      setView(drag.v0 - dt, drag.v1 - dt);
    }
    var hit = probe(p[0], p[1]);
    cursorX = p[0] >= LW ? p[0] : -1;
    readout.textContent = hit ? hit.text : '';
    draw();
  });
  canvas.addEventListener('mouseleave', function () { cursorX = -1; readout.textContent = ''; drag = null; draw(); });
  canvas.addEventListener('mousedown', function (e) {
    var p = local(e);
    if (p[0] >= LW) { drag = {x: p[0], v0: v0, v1: v1}; e.preventDefault(); }
  });
  window.addEventListener('mouseup', function () { drag = null; });
  canvas.addEventListener('dblclick', function () { setView(0, END); });
  canvas.addEventListener('wheel', function (e) {
    var p = local(e);
    if (p[0] < LW || !e.deltaY) return; // over the names: the tracks scroll
    e.preventDefault();
    var f = e.deltaY > 0 ? 1.25 : 1 / 1.25, tc = tOf(p[0]);
    setView(tc - (tc - v0) * f, tc + (v1 - tc) * f);
  }, {passive: false});
  scroll.addEventListener('scroll', draw);
  window.addEventListener('resize', resize);
  bar.hidden = false;
  bar.querySelectorAll('button').forEach(function (b) {
    b.addEventListener('click', function () {
      if (b.dataset.act === 'whole') setView(0, END);
      else { shared = !shared; b.textContent = 'scale: ' + (shared ? 'shared' : 'per track'); draw(); }
    });
  });
  resize();
  window.tlmJob = {
    tracks: T, end: END, rowHeight: RH, axis: AXIS, labelWidth: LW,
    view: function () { return [v0, v1]; }, setView: setView, x: xOf, t: tOf, rowTop: rowTop,
    // scrolls so that track k is in view; returns its top on the canvas
    show: function (k) { scroll.scrollTop = Math.max(0, k * RH - (VH - AXIS - RH) / 2); draw(); return rowTop(k); },
    drawn: function () { return drawn; }, probe: probe
  };
  body.setAttribute('data-tlm-tracks', String(T.length));
  body.setAttribute('data-tlm-ready-ms', performance.now().toFixed(1)); // since navigation started
  body.setAttribute('data-tlm-ready', '1');
})();
