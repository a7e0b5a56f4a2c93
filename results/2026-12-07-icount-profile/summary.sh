#!/bin/sh
# summary.sh [console.log]: per round and scheduler, MB/s, and the samples under
# __schedule (the switch) and sock_def_readable (tbench's wakeups) with callers
# (children), as % of that run's samples and as points of EEVDF's instructions per MB
# in that round (share x EEVDF's MB/s / the run's MB/s: under --icount a guest second
# is a billion instructions, and every run samples the same 3 s of guest time); the
# last three columns are those points less EEVDF's in that round. rest includes the
# idle loop (do_idle, 3 to 4 % of the samples), guest time rather than work.
awk '/^===/ { n = $2; r = $4; mb[n, r] = $6; if (r > R) R = r }
	/\[k\] __schedule$/ { s[n, r] = $1 + 0 }
	/\[k\] sock_def_readable$/ { w[n, r] = $1 + 0 }
	END {
		printf "%-5s %-6s %7s %9s %8s %7s %8s %7s %6s %8s %8s %6s\n", "round", "sched", "MB/s", "instr/MB",
			"switch%", "switch", "wakeup%", "wakeup", "rest", "+switch", "+wakeup", "+rest"
		for (r = 1; r <= R; r++) {
			e = mb["eevdf", r]
			split("eevdf sis cosmos", names, " ")
			for (i = 1; i <= 3; i++) {
				n = names[i]; k = e / mb[n, r]
				sw = s[n, r] * k; wk = w[n, r] * k; rest = 100 * k - sw - wk
				if (i == 1) { esw = sw; ewk = wk; erest = rest }
				printf "%-5d %-6s %7.1f %9.3f %8.2f %7.2f %8.2f %7.2f %6.1f %8.2f %8.2f %6.2f\n", r, n, mb[n, r], k,
					s[n, r], sw, w[n, r], wk, rest, sw - esw, wk - ewk, rest - erest
			}
		}
	}' "${1:-$(dirname "$0")/console.log}"
