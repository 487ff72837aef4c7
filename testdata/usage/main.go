// Command usage is a test fixture that costs a known amount: "burn MS"
// spins until its own CPU clock (getrusage) shows MS milliseconds and
// prints what it measured; "touch MIB" allocates MIB mebibytes, writes
// every page and exits.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: usage burn MS | touch MIB")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "burn":
		want := time.Duration(n) * time.Millisecond
		x := 0
		for {
			for i := 0; i < 1e6; i++ {
				x += i
			}
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			if used >= want {
				fmt.Println(used.Milliseconds(), x%2)
				return
			}
		}
	case "touch":
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println(len(b))
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}
