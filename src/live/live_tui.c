/* SPDX-License-Identifier: MIT */
/*
 * live_tui.c - the `tlm top` screen (ncurses), laid out as htop and nvtop
 * are: meters per device at the top (reserved of the device's size,
 * allocated of reserved), the history of the last minutes, the steps, the
 * forecast and the OOMs, then a table (for a job: one row per rank, the
 * selected one's sites below it) with its sorted column marked, and the
 * function-key bar at the bottom. Keys: q/F10 quit, space/p pause, s/F6 or
 * < > the sort column, b g c n a column at once, arrows and pages move, h/F1
 * help. The trace is read on between redraws, paused or not, so the screen
 * never falls behind.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "common/text.h"
#include "live_fmt.h"
#include "live_int.h"
#include "render/render.h"

#define TURN_MS 100       /* key wait per turn */
#define READ_NS 40000000u /* reading per turn, at most */

enum { C_HEAD = 1, C_RES, C_ALLOC, C_KEY, C_BAR, C_WARN };

struct ui {
	struct tlm_live_job *job;
	const struct tlm_live_ui *o;
	enum tlm_live_sort sort;
	bool paused, help, utf8;
	size_t sel, top;          /* the selected row (job), the first site row shown */
	int rows, cols;
};

static void put(int y, int x, int attr, const char *s)
{
	if (y < 0 || y >= LINES || x >= COLS)
		return;
	char safe[1024]; /* paths, commands and site names come from traces: shown safe */
	attron(attr);
	mvaddnstr(y, x, tlm_text_copy(safe, sizeof safe, s), COLS - x);
	attroff(attr);
}

/* An htop meter: "RES [|||||      123.0 MiB/1.0 GiB]" */
static void meter(int y, int x, int w, const char *name, uint64_t v, uint64_t of, const char *text, int pair)
{
	if (w < 12)
		return;
	put(y, x, COLOR_PAIR(C_HEAD) | A_BOLD, name);
	int in = w - (int)strlen(name) - 2, tl = (int)strlen(text);
	int fill = of ? (int)((double)v / (double)of * in + 0.5) : 0;
	if (fill > in)
		fill = in;
	mvaddch(y, x + (int)strlen(name), '[' | A_BOLD);
	for (int i = 0; i < in; i++) {
		int c = i >= in - tl ? text[i - (in - tl)] : i < fill ? '|' : ' ';
		mvaddch(y, x + (int)strlen(name) + 1 + i, (chtype)c | (i < fill && i < in - tl ? COLOR_PAIR(pair) | A_BOLD : 0));
	}
	mvaddch(y, x + (int)strlen(name) + 1 + in, ']' | A_BOLD);
}

static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};

/* One mark per second of the last w seconds (up to the history kept),
 * right-aligned: now is the last column. */
static void history(struct ui *u, int y, int x, int w, const struct tlm_live_dev *d)
{
	if (w < 8 || d->nhist < 1)
		return;
	char m[512];
	if (w > TLM_LIVE_HIST)
		w = TLM_LIVE_HIST;
	size_t secs = (size_t)w;
	snprintf(m, sizeof m, "%zu s", secs);
	put(y, x - 8, 0, m);
	tlm__live_marks(m, (size_t)w, d, secs, "012345678");
	move(y, x);
	attron(COLOR_PAIR(C_ALLOC));
	for (int i = 0; i < w; i++) {
		int lv = m[i] == ' ' ? -1 : m[i] - '0';
		if (u->utf8)
			addstr(lv < 0 ? " " : blocks[lv ? lv : 1]);
		else
			addch(lv < 0 ? ' ' : (chtype)" .:-=+*#@"[lv]);
	}
	attroff(COLOR_PAIR(C_ALLOC));
}

static int devices(struct ui *u, int y, const struct tlm_live_view *v)
{
	char name[32], t[64], a[32], b[32];
	int half = COLS / 2;
	for (size_t i = 0; i < v->ndev && y < LINES - 8; i++) {
		const struct tlm_live_dev *d = &v->dev[i];
		tlm__live_dev_name(name, sizeof name, d);
		snprintf(t, sizeof t, "%s/%s", tlm__human(a, sizeof a, d->reserved),
			 d->total ? tlm__human(b, sizeof b, d->total) : "?");
		put(y, 0, COLOR_PAIR(C_HEAD) | A_BOLD, name);
		meter(y, 12, half - 13, "RES", d->reserved, d->total ? d->total : d->peak_reserved, t, C_RES);
		snprintf(t, sizeof t, "peak %s", tlm__human(a, sizeof a, d->peak_reserved));
		put(y, half + 1, 0, t);
		y++;
		snprintf(t, sizeof t, "%s", tlm__human(a, sizeof a, d->allocated));
		meter(y, 12, half - 13, "ALC", d->allocated, d->reserved, t, C_ALLOC);
		snprintf(t, sizeof t, "peak %s", tlm__human(a, sizeof a, d->peak_allocated));
		put(y, half + 1, 0, t);
		y++;
		history(u, y, 12, COLS - 13, d);
		y++;
	}
	return y;
}

static int summary(int y, const struct tlm_live_view *v)
{
	char b[512];
	tlm__live_steps_line(b, sizeof b, v);
	put(y++, 1, 0, b);
	for (size_t i = 0; i < v->nforecast && y < LINES - 6; i++) {
		tlm__live_forecast_line(b, sizeof b, &v->forecast[i]);
		size_t k = strlen(b);
		if (v->forecast[i].known && !v->forecast[i].modelled)
			snprintf(b + k, sizeof b - k, "; %s", TLM__LIVE_LINEAR);
		put(y++, 1, v->forecast[i].known ? COLOR_PAIR(C_WARN) | A_BOLD : 0, b);
	}
	tlm__live_oom_line(b, sizeof b, v);
	put(y++, 1, v->ooms ? COLOR_PAIR(C_WARN) | A_BOLD : 0, b);
	return y;
}

/* The table head in reverse video, the sorted column marked (htop). */
static void table_head(int y, const char *text, const char *sorted)
{
	char line[1024];
	snprintf(line, sizeof line, "%-*s", COLS < (int)sizeof line ? COLS : (int)sizeof line - 1, text);
	put(y, 0, COLOR_PAIR(C_BAR), line);
	const char *at = sorted ? strstr(line, sorted) : NULL;
	if (at)
		put(y, (int)(at - line), COLOR_PAIR(C_KEY) | A_BOLD, sorted);
}

static void sites(struct ui *u, int y, const struct tlm_live_view *v)
{
	static const char *const col[TLM_LIVE_NSORT] = {"BYTES", "PER STEP", "ALLOCS", "SITE"};
	char b[512];
	tlm__live_site_head(b, sizeof b);
	table_head(y++, b, col[u->sort]);
	int room = LINES - 1 - y;
	if (room < 1)
		return;
	if (u->top + (size_t)room > v->nsites)
		u->top = v->nsites > (size_t)room ? v->nsites - (size_t)room : 0;
	for (size_t i = u->top; i < v->nsites && y < LINES - 1; i++) {
		tlm__live_site_line(b, sizeof b, &v->site[i]);
		put(y++, 0, 0, b);
	}
	if (!v->nsites)
		put(y, 1, 0, v->total_sites ? "" : "no live allocations");
}

static void keybar(struct ui *u)
{
	static const char *const k[][2] = {{"F1", "Help   "}, {"F6", "SortBy "}, {"Space", "Pause  "}, {"F10", "Quit   "}};
	move(LINES - 1, 0);
	clrtoeol();
	int x = 0;
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		put(LINES - 1, x, A_BOLD, k[i][0]);
		x += (int)strlen(k[i][0]);
		put(LINES - 1, x, COLOR_PAIR(C_BAR), i == 2 && u->paused ? "Resume " : k[i][1]);
		x += 7;
	}
	char s[64];
	snprintf(s, sizeof s, "  sort: %s%s", tlm_live_sort_names[u->sort], u->paused ? "  PAUSED" : "");
	put(LINES - 1, x, u->paused ? COLOR_PAIR(C_WARN) | A_BOLD : 0, s);
}

static void head(int y, const struct tlm_live_view *v, const char *what)
{
	char st[256];
	put(y, 0, A_BOLD, "tlm top - ");
	put(y, 10, A_BOLD, what);
	tlm__live_state_line(st, sizeof st, v);
	put(y + 1, 1, 0, st);
}

static void help(void)
{
	static const char *const lines[] = {
		"tlm top: GPU memory of a running program, from its trace (docs/top.md)",
		"",
		"  q, F10        quit",
		"  space, p      pause the screen (the trace is still read)",
		"  s, F6, < >    next / previous sort column",
		"  b g c n       sort by bytes, growth per step, allocations, newest",
		"  up, down      select a process (job), scroll the sites",
		"  PgUp, PgDn    scroll the sites",
		"  h, F1, ?      this help (any key goes back)",
		"",
		"RES: reserved (held from the driver) of the device; ALC: allocated (handed out",
		"by the program's allocator) of reserved; the marks: allocated, one per second.",
		"PER STEP: a site's growth per training step (a step leak, report.md).",
	};
	erase();
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		put((int)i + 1, 2, i ? 0 : A_BOLD, lines[i]);
}

static void job_rows(struct ui *u, int *y)
{
	char b[512];
	snprintf(b, sizeof b, " %4s %7s %-8s %10s %10s %10s %7s %11s %4s  %s", "RANK", "PID", "STATE", "RESERVED", "ALLOCATED",
		 "PEAK ALLOC", "STEPS/S", "GROWTH/STEP", "OOM", "TRACE");
	table_head((*y)++, b, NULL);
	size_t n = tlm_live_job_count(u->job);
	int room = LINES / 3;
	size_t first = u->sel >= (size_t)room ? u->sel - (size_t)room + 1 : 0;
	for (size_t i = first; i < n && *y < LINES - 8 && (int)(i - first) < room; i++) {
		const struct tlm_live_view *v = tlm_live_view(tlm_live_job_get(u->job, i), u->sort, false);
		if (!v)
			continue;
		uint64_t res = 0, alloc = 0, peak = 0, growth = 0;
		for (size_t k = 0; k < v->ndev; k++) {
			res += v->dev[k].reserved;
			alloc += v->dev[k].allocated;
			peak = v->dev[k].peak_allocated > peak ? v->dev[k].peak_allocated : peak;
		}
		for (size_t k = 0; k < v->nforecast; k++)
			growth += v->forecast[k].growth_per_step;
		char rk[24] = "-", r[32], a[32], p[32], g[32] = "-", sp[24] = "-";
		if (v->rank >= 0)
			snprintf(rk, sizeof rk, "%lld", (long long)v->rank);
		if (v->steps_found && v->seconds_per_step > 0)
			snprintf(sp, sizeof sp, "%.2f", 1.0 / v->seconds_per_step);
		if (growth)
			snprintf(g, sizeof g, "+%s", tlm__human(p, sizeof p, growth));
		snprintf(b, sizeof b, " %4s %7u %-8s %10s %10s %10s %7s %11s %4llu  %s", rk, v->pid, tlm__live_state_word(v),
			 tlm__human(r, sizeof r, res), tlm__human(a, sizeof a, alloc), tlm__human(p, sizeof p, peak), sp, g,
			 (unsigned long long)v->ooms, tlm__base(v->path));
		put((*y)++, 0, i == u->sel ? A_REVERSE : 0, b);
	}
}

static void draw(struct ui *u)
{
	erase();
	if (u->help) {
		help();
		refresh();
		return;
	}
	size_t n = tlm_live_job_count(u->job);
	int y = 0;
	if (!n) {
		put(0, 0, A_BOLD, "tlm top - waiting for traces");
		put(1, 1, 0, tlm_live_job_source(u->job));
		keybar(u);
		refresh();
		return;
	}
	if (u->sel >= n)
		u->sel = n - 1;
	struct tlm_live *l = tlm_live_job_get(u->job, u->sel);
	const struct tlm_live_view *v = tlm_live_view(l, u->sort, true);
	if (!v)
		return;
	char what[512];
	if (v->pid)
		snprintf(what, sizeof what, "%s  pid %u%s  %s", tlm__base(v->path), v->pid, v->forked ? " (fork child)" : "",
			 v->command);
	else
		snprintf(what, sizeof what, "%s", v->path);
	head(y, v, what);
	y += 2;
	if (tlm_live_job_is_set(u->job) && n > 1) {
		char b[256];
		snprintf(b, sizeof b, "job %s: %zu traces; the selected one below", tlm_live_job_source(u->job), n);
		put(y++, 1, 0, b);
		job_rows(u, &y);
		/* the rows asked for light views: the selected one's full view again */
		v = tlm_live_view(l, u->sort, true);
		if (!v)
			return;
	}
	y = devices(u, y, v);
	y = summary(y, v);
	sites(u, y, v);
	keybar(u);
	refresh();
}

static void key(struct ui *u, int ch, bool *quit)
{
	if (u->help) {
		u->help = false;
		return;
	}
	size_t n = tlm_live_job_count(u->job);
	switch (ch) {
	case 'q': case 'Q': case KEY_F(10): *quit = true; break;
	case ' ': case 'p': case 'P': u->paused = !u->paused; break;
	case 's': case KEY_F(6): case '>': u->sort = (u->sort + 1) % TLM_LIVE_NSORT; break;
	case '<': u->sort = (u->sort + TLM_LIVE_NSORT - 1) % TLM_LIVE_NSORT; break;
	case 'b': u->sort = TLM_LIVE_BY_BYTES; break;
	case 'g': u->sort = TLM_LIVE_BY_GROWTH; break;
	case 'c': u->sort = TLM_LIVE_BY_COUNT; break;
	case 'n': u->sort = TLM_LIVE_BY_NEWEST; break;
	case 'h': case '?': case KEY_F(1): u->help = true; break;
	case KEY_UP:
		if (n > 1 && u->sel)
			u->sel--;
		else if (u->top)
			u->top--;
		break;
	case KEY_DOWN:
		if (n > 1 && u->sel + 1 < n)
			u->sel++;
		else if (n <= 1)
			u->top++;
		break;
	case KEY_PPAGE: u->top = u->top > 10 ? u->top - 10 : 0; break;
	case KEY_NPAGE: u->top += 10; break;
	case KEY_HOME: u->top = 0; break;
	default: break;
	}
}

int tlm_live_tui(struct tlm_live_job *j, const struct tlm_live_ui *o)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return -1;
	setlocale(LC_CTYPE, "");
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return -1;
	set_term(scr);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(C_HEAD, COLOR_CYAN, -1);
		init_pair(C_RES, COLOR_BLUE, -1);
		init_pair(C_ALLOC, COLOR_GREEN, -1);
		init_pair(C_KEY, COLOR_BLACK, COLOR_CYAN);
		init_pair(C_BAR, COLOR_BLACK, COLOR_GREEN);
		init_pair(C_WARN, COLOR_RED, -1);
	}
	struct ui u = {.job = j, .o = o, .sort = o->sort};
	const char *cs = nl_langinfo(CODESET);
	u.utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	uint64_t next = 0, iv = (uint64_t)(o->interval_s * 1e9);
	bool quit = false, dirty = true, more = false;
	int rc = 0;
	for (;;) {
		timeout(more ? 0 : TURN_MS); /* a backlog is read at full speed, keys still answered */
		int ch = getch();
		if (ch == KEY_RESIZE)
			dirty = true;
		else if (ch != ERR) {
			key(&u, ch, &quit);
			dirty = true;
		}
		if (quit) {
			rc = 1;
			break;
		}
		uint64_t t0 = tlm__live_mono_ns();
		while ((more = tlm_live_job_poll(j, 65536)) && tlm__live_mono_ns() - t0 < READ_NS)
			;
		if (o->tick ? o->tick(o->ctx) : tlm_live_job_ended(j))
			break;
		uint64_t now = tlm__live_mono_ns();
		if ((!u.paused && now >= next) || dirty) {
			draw(&u);
			next = now + iv;
			dirty = false;
		}
	}
	endwin();
	delscreen(scr);
	return rc;
}
