//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos)

package main

import "os"

// ttyWidth is 0, unlimited, where the terminal's width is not asked for
// (Windows): $COLUMNS still fits the tables there.
func ttyWidth(*os.File) int { return 0 }
