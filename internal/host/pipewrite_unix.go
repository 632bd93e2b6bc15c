//go:build unix

package host

import (
	"os"
	"syscall"
)

// rawPipe tries a write without blocking: what the pipe takes now is
// written, and a full pipe is reported rather than waited for, so that
// only a write that must wait pays for watching its context.
type rawPipe struct {
	f  *os.File
	rc syscall.RawConn
	// The write being tried, for attempt; pipeWriter's caller serialises
	// writes.
	data    []byte
	n       int
	blocked bool
	err     error
	attempt func(fd uintptr) bool // r.try, bound once
}

func newRawPipe(f *os.File) *rawPipe {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawPipe{f: f, rc: rc}
	r.attempt = r.try
	return r
}

// tryWrite writes what of data the pipe takes now; blocked says the pipe
// is full and data[n:] is left to write.
func (r *rawPipe) tryWrite(data []byte) (n int, blocked bool, err error) {
	r.data, r.n, r.blocked, r.err = data, 0, false, nil
	if err := r.rc.Write(r.attempt); err != nil {
		return r.n, false, err
	}
	n, blocked, err = r.n, r.blocked, r.err
	r.data = nil
	return n, blocked, err
}

func (r *rawPipe) try(fd uintptr) bool {
	for r.n < len(r.data) {
		m, err := syscall.Write(int(fd), r.data[r.n:])
		if m > 0 {
			r.n += m
		}
		switch err {
		case nil, syscall.EINTR:
		case syscall.EAGAIN:
			r.blocked = true
			return true
		default:
			r.err = &os.PathError{Op: "write", Path: r.f.Name(), Err: err}
			return true
		}
	}
	return true
}
