/* SPDX-License-Identifier: MIT */
/*
 * xt.h - what the export tests share: a synthetic trace's report (kept on
 * disk until done()), and JSON parsed back or the test fails.
 */
#ifndef TLM_TESTS_XT_H
#define TLM_TESTS_XT_H

/* after cmocka.h, rt.h and encoders/json_in.h */
static inline struct tlm_report *build(struct rt *t, uint64_t end_t, char **pathp)
{
	char *path = rt_close(t, true, end_t);
	struct tlm_report *r = rt_report(path);
	*pathp = path;
	return r;
}

static inline void done(struct tlm_report *r, char *path)
{
	tlm_report_free(r);
	unlink(path);
	free(path);
}

static inline struct tlm_jv *parse(const char *s)
{
	char err[200];
	struct tlm_jv *v = tlm_json_parse(s, strlen(s), err, sizeof err);
	if (!v)
		fprintf(stderr, "JSON: %s\n%s\n", err, s);
	assert_non_null(v);
	return v;
}

#endif
