# SPDX-License-Identifier: MIT
# zoo_median.awk - the median of the figures x[v, 1..n[v]] of variant v,
# leaving its minimum in lo[v] and its maximum in hi[v] (torch_zoo.sh and
# torch_zoo_ab.sh summarise their runs with it, as vary_heaptrack.sh does:
# awk -f zoo_median.awk -f -).
function med(v,   k, i, j, t, a) {
	k = n[v]
	for (i = 1; i <= k; i++) a[i] = x[v, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo[v] = a[1]; hi[v] = a[k]
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
