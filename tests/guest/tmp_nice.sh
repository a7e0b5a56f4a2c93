. /tests/lib.sh
start_sis /tmp/n.log || echo "start failed $(tail -3 /tmp/n.log)"
sst() { cut -d' ' -f"$2" /proc/"$1"/schedstat; }
pair() { # pair NICE_A NICE_B [busy]
	sis-probe spin 3 $1 & A=$!
	sis-probe spin 3 $2 & B=$!
	sleep 2
	a0=$(sst $A 1) b0=$(sst $B 1) br0=$(sst $B 3)
	sleep 10
	a=$((($(sst $A 1) - a0) / 1000000)) b=$((($(sst $B 1) - b0) / 1000000)) br=$(($(sst $B 3) - br0))
	kill $A $B; wait $A $B 2>/dev/null
	echo "# nice $1 vs $2 on CPU 3: $a ms vs $b ms ($br slices) $3"
}
pair -20 19
pair -20 0
hackbench -g 2 -l 100000 >/dev/null 2>&1 & HB=$!
pair -20 0 "with hackbench on the other CPUs"
kill $HB
stop_sis
grep -i "eevdf:" /tmp/n.log | tail -1
grep -i "error\|stall" /tmp/n.log | head -3
