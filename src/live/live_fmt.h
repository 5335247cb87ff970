/* SPDX-License-Identifier: MIT */
/*
 * live_fmt.h - the lines a view is said in (live_fmt.c), shared by the plain
 * text (live_text.c) and the screen (live_tui.c). Each writes one line,
 * without a newline, into buf (cut to n - 1 bytes).
 */
#ifndef TLM_LIVE_FMT_H
#define TLM_LIVE_FMT_H

#include "live.h"

const char *tlm__live_state_word(const struct tlm_live_view *v); /* waiting, reading, running, ended, failed */
void tlm__live_state_line(char *buf, size_t n, const struct tlm_live_view *v);
void tlm__live_dev_name(char *buf, size_t n, const struct tlm_live_dev *d);
void tlm__live_dev_line(char *buf, size_t n, const struct tlm_live_dev *d);
void tlm__live_steps_line(char *buf, size_t n, const struct tlm_live_view *v);
void tlm__live_forecast_line(char *buf, size_t n, const struct tlm_report_forecast *fc);
/* What a known forecast that is not modelled leaves out (the window's never
 * is: the report's replay of a PyTorch run through the caching allocator's
 * model reads the whole trace again). */
#define TLM__LIVE_LINEAR "by bytes alone: the allocator's rounding and fragmentation make it sooner"
void tlm__live_oom_line(char *buf, size_t n, const struct tlm_live_view *v);
void tlm__live_site_head(char *buf, size_t n);
void tlm__live_site_line(char *buf, size_t n, const struct tlm_live_site *s);
/* w marks (buf holds w + 1 bytes) of the allocated bytes of the last secs
 * seconds, from ramp (lowest first). */
void tlm__live_marks(char *buf, size_t w, const struct tlm_live_dev *d, size_t secs, const char *ramp);

#endif
