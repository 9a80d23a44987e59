package runner

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	join := joinMsg{Rank: 2, Size: 4, NodeIndex: 1, Node: "n2", Hostname: "h", Addrs: []string{"10.0.0.2:5000"}, Config: "abc"}
	join.setHost(&results.Host{Hostname: "h", CPUModel: "cpu"})
	if err := send(&buf, msgJoin, join); err != nil {
		t.Fatal(err)
	}
	if err := send(&buf, msgAbort, abortMsg{Reason: "why"}); err != nil {
		t.Fatal(err)
	}
	var got joinMsg
	if err := expect(&buf, maxControlFrame, msgJoin, &got); err != nil {
		t.Fatal(err)
	}
	host, err := got.host()
	if got.Rank != 2 || err != nil || host == nil || host.CPUModel != "cpu" || got.check() != nil {
		t.Errorf("join %+v, host %+v, %v", got, host, err)
	}
	// A description is read as strictly as any message.
	got.Host = json.RawMessage(`{"hostname":"h","cpu_modle":"x"}`)
	if _, err := got.host(); err == nil {
		t.Error("a description with an unknown field was accepted")
	}
	// An abort arriving instead of the expected message is the run's reason.
	err = expect(&buf, maxControlFrame, msgTable, &tableMsg{})
	var abort *abortError
	if !errors.As(err, &abort) || abort.Reason != "why" {
		t.Errorf("got %v, want the abort", err)
	}
	if _, _, err := readFrame(&buf, maxControlFrame); err != io.EOF {
		t.Errorf("at the end: %v, want EOF", err)
	}
}

func TestFrameLimits(t *testing.T) {
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[:], 1<<30)
	hdr[4] = byte(msgHello)
	// A huge length is refused before anything is allocated or read.
	_, _, err := readFrame(bytes.NewReader(hdr[:]), maxHandshakeFrame)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 4096") {
		t.Errorf("got %v", err)
	}
	binary.BigEndian.PutUint32(hdr[:], 0)
	if _, _, err := readFrame(bytes.NewReader(hdr[:]), maxHandshakeFrame); err == nil {
		t.Error("a frame without a type was accepted")
	}
	binary.BigEndian.PutUint32(hdr[:], 10)
	if _, _, err := readFrame(bytes.NewReader(append(hdr[:], "abc"...)), maxHandshakeFrame); err != io.ErrUnexpectedEOF {
		t.Errorf("a truncated frame: %v", err)
	}
}

// handshake runs both sides over a pipe and returns their errors.
func handshake(t *testing.T, dialToken, acceptToken, dialSession, acceptSession string) (dialErr, acceptErr error, hello helloMsg) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	a.SetDeadline(time.Now().Add(5 * time.Second))
	b.SetDeadline(time.Now().Add(5 * time.Second))
	done := make(chan struct{})
	go func() {
		defer close(done)
		hello, acceptErr = acceptHandshake(b, []byte(acceptToken), acceptSession)
		if acceptErr != nil {
			b.Close()
		}
	}()
	dialErr = dialHandshake(a, []byte(dialToken), dialSession, "peer", 3)
	a.Close()
	<-done
	return dialErr, acceptErr, hello
}

func TestHandshake(t *testing.T) {
	dialErr, acceptErr, hello := handshake(t, "tok", "tok", "9.0", "9.0")
	if dialErr != nil || acceptErr != nil || hello.Purpose != "peer" || hello.Rank != 3 {
		t.Fatalf("good token: %v, %v, %+v", dialErr, acceptErr, hello)
	}
	dialErr, acceptErr, _ = handshake(t, "bad", "tok", "9.0", "9.0")
	if !errors.Is(dialErr, errRefused) || acceptErr == nil || acceptErr.Error() != "bad token" {
		t.Errorf("bad token: dialer %v, acceptor %v", dialErr, acceptErr)
	}
	// The same token for another step of the job is no good either.
	dialErr, acceptErr, _ = handshake(t, "tok", "tok", "9.0", "9.1")
	if !errors.Is(dialErr, errRefused) || acceptErr == nil {
		t.Errorf("other step: dialer %v, acceptor %v", dialErr, acceptErr)
	}
}

func TestHandshakeImpostorListener(t *testing.T) {
	// A listener without the token cannot prove it: the dialer, which must
	// not hand its join to just anyone, gives up.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		send(b, msgChallenge, challengeMsg{Version: protoVersion, Nonce: newNonce()})
		readFrame(b, maxHandshakeFrame)
		send(b, msgWelcome, welcomeMsg{MAC: make([]byte, 32)})
	}()
	err := dialHandshake(a, []byte("tok"), "1.0", "join", 1)
	if err == nil || !strings.Contains(err.Error(), "does not know the token") {
		t.Errorf("got %v", err)
	}
}

func TestHandshakeMACBindsEverything(t *testing.T) {
	na, nb := newNonce(), newNonce()
	base := handshakeMAC([]byte("t"), "1.0", "dial", "join", 1, na, nb)
	for name, mac := range map[string][]byte{
		"token":   handshakeMAC([]byte("u"), "1.0", "dial", "join", 1, na, nb),
		"session": handshakeMAC([]byte("t"), "1.1", "dial", "join", 1, na, nb),
		"role":    handshakeMAC([]byte("t"), "1.0", "accept", "join", 1, na, nb),
		"purpose": handshakeMAC([]byte("t"), "1.0", "dial", "peer", 1, na, nb),
		"rank":    handshakeMAC([]byte("t"), "1.0", "dial", "join", 2, na, nb),
		"nonces":  handshakeMAC([]byte("t"), "1.0", "dial", "join", 1, nb, na),
	} {
		if bytes.Equal(mac, base) {
			t.Errorf("changing the %s does not change the MAC", name)
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	var buf bytes.Buffer
	send(&buf, msgJoin, joinMsg{Rank: 1, Size: 2, Addrs: []string{"127.0.0.1:1"}})
	f.Add(buf.Bytes())
	buf.Reset()
	writeFrame(&buf, msgTable, encodeTable(tableMsg{Members: []member{{Rank: 0, Addrs: []string{"10.0.0.1:1"}}}}))
	f.Add(buf.Bytes())
	buf.Reset()
	send(&buf, msgHello, helloMsg{Purpose: "join", Rank: 1, Nonce: newNonce(), MAC: newNonce()})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, 9})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, payload, err := readFrame(bytes.NewReader(data), maxHandshakeFrame)
		if err != nil {
			return
		}
		if len(payload) > maxHandshakeFrame {
			t.Fatalf("payload of %d bytes passed the limit", len(payload))
		}
		// Whatever the type byte says, decoding into any message must fail
		// cleanly or yield a message whose checks hold.
		var j joinMsg
		if decode(typ, payload, &j) == nil && j.check() == nil {
			if j.Rank < 0 || j.Rank >= j.Size || len(j.Addrs) == 0 || len(j.Addrs) > maxAddrs {
				t.Fatalf("join passed its check: %+v", j)
			}
		}
		if tb, err := decodeTable(payload, 1024); err == nil && tb.check(len(tb.Members)) == nil {
			for i, m := range tb.Members {
				if m.Rank != i || len(m.Addrs) == 0 {
					t.Fatalf("table passed its check: %+v", tb)
				}
			}
		}
		decode(typ, payload, &helloMsg{})
		decode(typ, payload, &barrierMsg{})
		decode(typ, payload, &abortMsg{})
		decode(typ, payload, &challengeMsg{})
	})
}

// FuzzAcceptHandshake feeds what a stranger might send to a listener: it
// must never get past the handshake without the token.
func FuzzAcceptHandshake(f *testing.F) {
	var buf bytes.Buffer
	send(&buf, msgHello, helloMsg{Purpose: "join", Rank: 1, Nonce: make([]byte, nonceLen), MAC: make([]byte, 32)})
	f.Add(buf.Bytes())
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(data), io.Discard}
		if h, err := acceptHandshake(rw, []byte("token"), "1.0"); err == nil {
			t.Fatalf("a stranger passed the handshake: %+v", h)
		}
	})
}

func FuzzParseAddrFile(f *testing.F) {
	f.Add([]byte(`{"schema":"sbench.rendezvous/v2","session":"1.0","node":"n1","addrs":["10.0.0.1:5000","n1:5000"]}`))
	f.Add([]byte(`{"schema":"sbench.rendezvous/v2","addrs":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		af, err := parseAddrFile(data)
		if err != nil {
			return
		}
		if af.Schema != rendezvousSchema || checkAddrs(af.Addrs) != nil {
			t.Fatalf("accepted %+v", af)
		}
	})
}

func TestPattern(t *testing.T) {
	for _, size := range []int{0, 1, 7, 4096, 1 << 20} {
		p := newPattern(size)
		if len(p.msg(0)) != wireLen(size) {
			t.Fatalf("size %d: message of %d bytes", size, len(p.msg(0)))
		}
		for i := 0; i < 3; i++ {
			msg := append([]byte(nil), p.msg(i)...)
			if err := p.verify(msg, i, true); err != nil {
				t.Errorf("size %d, message %d does not verify: %v", size, i, err)
			}
			if size > 1 && p.verify(msg, i+1, true) == nil {
				t.Errorf("size %d: message %d passes as message %d", size, i, i+1)
			}
		}
	}
	if bytes.Equal(newPattern(64).msg(0), newPattern(128).msg(0)[:64]) {
		t.Error("two sizes share a pattern")
	}
	// A flipped byte in the middle: the cheap check misses it, the full one does not.
	p := newPattern(100000)
	msg := append([]byte(nil), p.msg(5)...)
	msg[5000] ^= 1
	if p.verify(msg, 5, false) != nil {
		t.Error("the first/last byte check looked at the middle")
	}
	if err := p.verify(msg, 5, true); err == nil || !strings.HasPrefix(err.Error(), "byte 5000 is ") {
		t.Errorf("full check: %v", err)
	}
}

func TestSummaries(t *testing.T) {
	times := make([]time.Duration, 100)
	for i := range times {
		times[i] = time.Duration(2*(i+1)) * time.Microsecond // round trips of 2…200 us
	}
	s := latencySample(64, times)
	if s.Value != 50.5 || *s.Min != 1 || *s.Max != 100 || *s.P50 != 50 || *s.P99 != 99 || s.Iterations != 100 || *s.X != 64 {
		t.Errorf("latency %+v (min %v p50 %v p99 %v max %v)", s, *s.Min, *s.P50, *s.P99, *s.Max)
	}
	// 2 windows of 10 × 1 MB: 10 ms and 30 ms, so 20 MB in 40 ms = 500 MB/s
	// overall, not the 666.7 MB/s mean of the windows' rates.
	b := bandwidthSample(1000000, 10, []time.Duration{10 * time.Millisecond, 30 * time.Millisecond})
	if b.Value != 500 || *b.Max != 1000 || *b.Min != 333.333 || b.Unit != "MB/s" {
		t.Errorf("bandwidth %+v (min %v max %v)", b, *b.Min, *b.Max)
	}
}
