# SPDX-License-Identifier: GPL-2.0-only
# schbench.awk: schbench's final wakeup latency percentiles as key=values. schbench
# (2023 on) prints a block per reporting interval and one at the end, each
#   Wakeup Latencies percentiles (usec) runtime 30 (s) (209403 total samples)
#   	  50.0th: 8          (43672 samples)
#   	* 99.0th: 20         (18323 samples)
# followed by Request Latencies and RPS blocks: the last Wakeup block is the run's.
/^Wakeup Latencies percentiles/ { w = 1; p50 = p99 = p999 = "nan"; next }
/Latencies percentiles|^RPS percentiles/ { w = 0 }
w {
	for (i = 1; i < NF; i++) {
		if ($i == "50.0th:") p50 = $(i + 1)
		if ($i == "99.0th:") p99 = $(i + 1)
		if ($i == "99.9th:") p999 = $(i + 1)
	}
}
END {
	if (p99 == "") p50 = p99 = p999 = "nan"
	print "schbench_p50_us=" p50 " schbench_p99_us=" p99 " schbench_p999_us=" p999
}
