package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeCases are messages as servers send them, and the edges where the
// envelope is left to the SDK's decoder.
var decodeCases = []struct {
	name string
	data string
	fast bool // decodeEnvelope takes it
}{
	{"response", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a \"quoted\" {brace"}]}}`, true},
	{"response, string id", `{"jsonrpc":"2.0","id":"a-1","result":{}}`, true},
	{"request", `{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"Go?"}}`, true},
	{"notification", `{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}`, true},
	{"spaces", " { \"jsonrpc\" : \"2.0\" , \"id\" : -12 , \"result\" : [ 1 , 2 ] } ", true},
	{"unknown member ignored", `{"jsonrpc":"2.0","id":1,"result":{},"x-extra":[1]}`, true},
	{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`, false},
	{"error null", `{"jsonrpc":"2.0","id":1,"result":{},"error":null}`, false},
	{"id with fraction", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, false},
	{"id with exponent", `{"jsonrpc":"2.0","id":1e3,"result":{}}`, false},
	{"id of 16 digits", `{"jsonrpc":"2.0","id":1234567890123456,"result":{}}`, false},
	{"id true", `{"jsonrpc":"2.0","id":true,"result":{}}`, false},
	{"id null response", `{"jsonrpc":"2.0","id":null,"result":{}}`, false},
	{"id escaped", `{"jsonrpc":"2.0","id":"a\u0041","result":{}}`, false},
	{"id not ASCII", `{"jsonrpc":"2.0","id":"é","result":{}}`, true},
	{"method not UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"p\xffing\"}", false},
	{"key escaped", `{"jsonrpc":"2.0","\u0069d":4,"result":{}}`, false},
	{"key in other case", `{"jsonrpc":"2.0","ID":4,"id":5,"result":{}}`, false},
	{"key repeated", `{"jsonrpc":"2.0","id":4,"id":5,"result":{}}`, true},
	{"params null", `{"jsonrpc":"2.0","method":"ping","id":1,"params":null}`, false},
	{"method null", `{"jsonrpc":"2.0","method":null,"id":1}`, false},
	{"method escaped", `{"jsonrpc":"2.0","method":"p\u0069ng","id":1}`, false},
	{"no version", `{"id":1,"result":{}}`, false},
	{"version 1.0", `{"jsonrpc":"1.0","id":1,"result":{}}`, false},
	{"no id, no method", `{"jsonrpc":"2.0","result":{}}`, false},
	{"not an object", `[1]`, false},
	{"deep", `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, false},
}

func TestDecodeMessageAsSDK(t *testing.T) {
	for _, tt := range decodeCases {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			if !json.Valid(data) {
				t.Fatalf("case is not valid JSON: %s", data)
			}
			if fast := decodeEnvelope(data) != nil; fast != tt.fast {
				t.Errorf("decodeEnvelope took it: %v, want %v", fast, tt.fast)
			}
			got, err := decodeMessage(data)
			want, wantErr := jsonrpc.DecodeMessage(data)
			if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeMessage = %#v, %v\nthe SDK's = %#v, %v", got, err, want, wantErr)
			}
		})
	}
}

// FuzzDecodeEnvelope holds the envelope read on the bytes to the SDK's
// decoder: whatever it takes, the SDK decodes to the same message.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, tt := range decodeCases {
		f.Add([]byte(tt.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got := decodeEnvelope(data)
		if got == nil {
			return
		}
		want, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			t.Fatalf("decodeEnvelope took %q, which the SDK refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeEnvelope(%q) = %#v, the SDK's %#v", data, got, want)
		}
	})
}

// stdioPair is a stdioConn over real pipes: the test writes what the
// server would on stdout, and reads what the host sent.
func stdioPair(t *testing.T, maxLine int) (*stdioConn, *os.File, *os.File) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := (&stdioTransport{r: outR, w: inW, maxLine: maxLine}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*stdioConn)
	t.Cleanup(func() {
		c.Close()
		outW.Close()
		inR.Close()
	})
	return c, outW, inR
}

func TestStdioConnFrames(t *testing.T) {
	const (
		call = `{"jsonrpc":"2.0","id":1,"result":{}}`
		note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	)
	tests := []struct {
		name   string
		stream string
		want   []string // the messages, as the SDK encodes them
		end    string   // the error after them
	}{
		{"lines", call + "\n" + note + "\n", []string{call, note}, "EOF"},
		{"crlf and blank lines", "\r\n\n" + call + "\r\n  \n" + note + "\r\n", []string{call, note}, "EOF"},
		{"a lone CR ends a line", call + "\r" + note + "\n", []string{call, note}, "EOF"},
		{"last line without newline", call + "\n" + note, []string{call, note}, "EOF"},
		{"a message over lines", "{\"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n" + note + "\n", []string{call, note}, "EOF"},
		{"not JSON", call + "\nhello\n" + note + "\n", []string{call}, "invalid character 'h' looking for beginning of value"},
		{"data after a message", call + " " + note + "\n", nil, "invalid trailing data at the end of stream"},
		{"ends inside a message", call + "\n{\"jsonrpc\":", []string{call}, "unexpected EOF"},
		{"over the line limit", call + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 300) + `"}}` + "\n", []string{call}, errFrameTooLarge.Error()},
		{"not a message", `{"jsonrpc":"2.0","result":{}}` + "\n", nil, "invalid request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, serverOut, _ := stdioPair(t, 256)
			go feed(serverOut, tt.stream)
			var got []string
			var end error
			for {
				msg, err := c.Read(context.Background())
				if err != nil {
					end = err
					break
				}
				data, err := jsonrpc.EncodeMessage(msg)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			if !reflect.DeepEqual(got, tt.want) || end.Error() != tt.end {
				t.Errorf("read %q, then %q\nwant %q, then %q", got, end, tt.want, tt.end)
			}
		})
	}
}

// TestStdioConnLongMessage: a message over thousands of lines (which a
// server should not send, and the SDK's reader takes), and what follows it
// on its last line and the next.
func TestStdioConnLongMessage(t *testing.T) {
	const lines = 5000
	var pretty, compact strings.Builder
	pretty.WriteString("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\"n\": [\n")
	compact.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"n":[`)
	for i := range lines {
		sep := ","
		if i == lines-1 {
			sep = ""
		}
		fmt.Fprintf(&pretty, "    %d%s\n", i, sep)
		fmt.Fprintf(&compact, "%d%s", i, sep)
	}
	pretty.WriteString("  ]}\n}")
	compact.WriteString("]}}")
	const note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	stream := pretty.String() + "\r" + note + "\n" + pretty.String() + "\n" + note + "\n"

	c, serverOut, _ := stdioPair(t, 1<<20)
	go feed(serverOut, stream)
	var got []string
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after %d messages: %v", len(got), err)
			}
			break
		}
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	want := []string{compact.String(), note, compact.String(), note}
	if !slices.Equal(got, want) {
		t.Errorf("read %d messages, want %d:\n%.200q\nwant\n%.200q", len(got), len(want), got, want)
	}

	// Over the line limit, counted over the message's lines.
	limited, limitedOut, _ := stdioPair(t, 1000)
	go feed(limitedOut, pretty.String()+"\n")
	if _, err := limited.Read(context.Background()); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("a message of %d bytes over a limit of 1000: %v", pretty.Len(), err)
	}
}

// feed writes what a server would on its stdout, and ends it.
func feed(serverOut *os.File, stream string) {
	io.WriteString(serverOut, stream)
	serverOut.Close()
}

func TestStdioConnBatch(t *testing.T) {
	c, serverOut, serverIn := stdioPair(t, 0)
	go io.WriteString(serverOut, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`+"\n")
	ctx := context.Background()
	var requests []*jsonrpc.Request
	for range 3 {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		requests = append(requests, msg.(*jsonrpc.Request))
	}
	if got := []string{requests[0].Method, requests[1].Method, requests[2].Method}; !reflect.DeepEqual(got, []string{"ping", "notifications/initialized", "ping"}) {
		t.Fatalf("methods %q", got)
	}
	// Answered out of order, sent once both are in, in the batch's order.
	for _, req := range []*jsonrpc.Request{requests[2], requests[0]} {
		if err := c.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":9}`)}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var sent strings.Builder
	for strings.Count(sent.String(), "\n") < 2 {
		n, err := serverIn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		sent.Write(buf[:n])
	}
	want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}` + "\n"
	if sent.String() != want {
		t.Errorf("sent\n%s\nwant\n%s", sent.String(), want)
	}
}

func TestStdioConnCloseEndsRead(t *testing.T) {
	c, _, _ := stdioPair(t, 0)
	done := make(chan error)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v, want EOF", err)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "ping"}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// FuzzStdioFrames reads one stream with the SDK's stdio connection and
// with the host's: every message the SDK's delivers, the host's delivers
// alike and in order, and where the SDK's reaches a clean end, so does the
// host's. The host's may read on where the SDK's stops (it allows spaces
// before a newline).
func FuzzStdioFrames(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","method":"x"}`))
	f.Add([]byte("\r\n{\"jsonrpc\": \"2.0\",\n \"id\": \"a\",\n \"result\": [1]\n}\r\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}} {"jsonrpc":"2.0","id":2,"result":{}}`))
	f.Fuzz(func(t *testing.T, stream []byte) {
		read := func(conn interface {
			Read(context.Context) (jsonrpc.Message, error)
		}) (msgs []string, end error) {
			for {
				msg, err := conn.Read(context.Background())
				if err != nil {
					return msgs, err
				}
				data, err := jsonrpc.EncodeMessage(msg)
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, string(data))
			}
		}
		sdkConn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(stream)), Writer: nopWriteCloser{}}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer sdkConn.Close()
		hostConn, _ := (&stdioTransport{r: io.NopCloser(bytes.NewReader(stream)), w: nopWriteCloser{}}).Connect(context.Background())
		defer hostConn.Close()
		want, wantEnd := read(sdkConn)
		got, gotEnd := read(hostConn)
		if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Fatalf("stream %q: read %q, the SDK's %q", stream, got, want)
		}
		if errors.Is(wantEnd, io.EOF) && (len(got) != len(want) || !errors.Is(gotEnd, io.EOF)) {
			t.Fatalf("stream %q: read %q then %v, the SDK's %q then EOF", stream, got, gotEnd, want)
		}
	})
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// TestStdioConnLineOverBuffer: a one-line message longer than the reader's
// buffer is read whole, and the message after it too.
func TestStdioConnLineOverBuffer(t *testing.T) {
	text := strings.Repeat("x", 3*readBufferSize+17)
	long := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + text + `"}}`
	next := `{"jsonrpc":"2.0","id":2,"result":{}}`
	c, serverOut, _ := stdioPair(t, 1<<20)
	go feed(serverOut, long+"\n"+next+"\n")
	for _, want := range []string{long, next} {
		msg, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil || string(data) != want {
			t.Fatalf("read %d bytes (%v), want %d", len(data), err, len(want))
		}
	}
}

// TestStdioConnWriteStall: a write to a pipe nobody reads ends when its
// context does, and so does a write waiting behind one that holds the
// pipe with no deadline at all; from then on every write fails at once,
// and Close ends the write still blocked.
func TestStdioConnWriteStall(t *testing.T) {
	big := &jsonrpc.Request{ID: mustID(float64(1)), Method: "tools/call", Params: json.RawMessage(`{"x":"` + strings.Repeat("x", 1<<20) + `"}`)}
	small := &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":1}`)}

	t.Run("its own write", func(t *testing.T) {
		c, _, _ := stdioPair(t, 0)
		ctx, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, errRoundTimeout)
		defer cancel()
		err := c.Write(ctx, big)
		var stall *stalledWrite
		if !errors.As(err, &stall) || !errors.Is(err, errStoppedReading) || !errors.Is(err, errRoundTimeout) {
			t.Fatalf("a write to a full pipe: %v, want a stalled write ended by the round's timeout", err)
		}
		if stall.wrote == 0 || stall.wrote >= stall.size || c.stall() != stall {
			t.Errorf("stall %+v: want a part of the message written, and the connection stalled", stall)
		}
		if err := c.Write(context.Background(), small); err != stall {
			t.Errorf("the next write: %v, want the stall at once", err)
		}
	})
	t.Run("waiting behind another", func(t *testing.T) {
		c, _, _ := stdioPair(t, 0)
		first := make(chan error)
		go func() { first <- c.Write(context.Background(), big) }()
		// The first write holds the pipe (the right to write is taken)
		// once the second cannot take it.
		for len(c.writing) == 0 {
			runtime.Gosched()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := c.Write(ctx, small); !errors.Is(err, errStoppedReading) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a write behind a blocked one: %v, want a stalled write", err)
		}
		c.Close()
		if err := <-first; err == nil {
			t.Error("the blocked write succeeded after Close")
		}
	})
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}
