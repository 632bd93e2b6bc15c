package host

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// httpTap adds a server's configured headers to every request of the
// Streamable HTTP transport and, when tracing, records the JSON-RPC messages
// in the request and response bodies (plain JSON or server-sent events).
type httpTap struct {
	headers map[string]string
	wire    *serverWire
	next    http.RoundTripper
}

func (t *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.wire != nil && req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			body.Close()
			t.wire.message("http", "->", data)
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || t.wire == nil || resp.Body == nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &tapReader{r: resp.Body, tap: &lineWriter{fn: func(l []byte) { t.wire.message("http", "<-", l) }}}
		resp.Body = &flushOnClose{ReadCloser: resp.Body}
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &tapReader{r: resp.Body, tap: &lineWriter{fn: func(l []byte) {
			if data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:")); ok {
				t.wire.message("http", "<-", bytes.TrimSpace(data))
			}
		}}}
	}
	return resp, nil
}

// flushOnClose delivers a JSON body's last line, which has no newline, to the
// tap when the body has been read.
type flushOnClose struct {
	io.ReadCloser
	done bool
}

func (f *flushOnClose) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	if err == io.EOF && !f.done {
		f.done = true
		if tr, ok := f.ReadCloser.(*tapReader); ok {
			tr.tap.Write([]byte("\n"))
		}
	}
	return n, err
}
