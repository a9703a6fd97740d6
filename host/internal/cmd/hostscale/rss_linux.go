package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// selfMaxRSS is this process's peak resident set size.
func selfMaxRSS() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return uint64(ru.Maxrss) << 10 // KiB on Linux
}

// childrenRSS is the resident set size of every descendant of this
// process, summed (from /proc).
func childrenRSS() uint64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/stat"))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	self := os.Getpid()
	var total uint64
	for pid := range parent {
		if pid != self && descends(pid, self, parent) {
			total += rss(pid)
		}
	}
	return total
}

func descends(pid, ancestor int, parent map[int]int) bool {
	for range 64 {
		p, ok := parent[pid]
		if !ok || p == 0 {
			return false
		}
		if p == ancestor {
			return true
		}
		pid = p
	}
	return false
}

// rss reads VmRSS of pid, in bytes.
func rss(pid int) uint64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
