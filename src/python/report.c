/* SPDX-License-Identifier: MIT */
/*
 * report.c - the report and the stacks for the Python package (tlmpy.h):
 * the C report (tlm_report_build) rendered by its own JSON writer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "encoders/json_out.h"
#include "render/render.h"
#include "analysis/report.h"
#include "tlmpy.h"

TLM_PY_API struct tlm_report *tlm_py_report(const char *path, char *err, size_t errlen)
{
	return tlm_report_build(path, err, errlen);
}

TLM_PY_API void tlm_py_report_free(struct tlm_report *r)
{
	tlm_report_free(r);
}

TLM_PY_API char *tlm_py_report_json(struct tlm_report *r, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return NULL;
	int bad = tlm_report_json(r, f);
	if (fclose(f) || bad) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

TLM_PY_API char *tlm_py_stacks_json(struct tlm_report *r, const uint32_t *ids, size_t n, size_t *len)
{
	char *buf = NULL, site[1024];
	size_t bn = 0;
	FILE *f = open_memstream(&buf, &bn);
	if (!f)
		return NULL;
	struct tlm__json j;
	tlm__json_init(&j, f);
	tlm__json_arr(&j);
	for (size_t i = 0; i < n; i++) {
		tlm__json_obj(&j);
		tlm__json_ku(&j, "id", ids[i]);
		tlm_report_site_key(r, ids[i], site, sizeof site);
		tlm__json_key(&j, "site");
		tlm__json_str(&j, site);
		tlm__json_stack(&j, r, ids[i]);
		tlm__json_obj_end(&j);
	}
	tlm__json_arr_end(&j);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	*len = bn;
	return buf;
}
