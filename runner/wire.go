package runner

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sbench/sbench/results"
)

// msgType is the first byte of a frame.
type msgType byte

const (
	msgChallenge msgType = iota + 1 // acceptor → dialer: nonce
	msgHello                        // dialer → acceptor: who, why, and proof of the token
	msgWelcome                      // acceptor → dialer: proof of the token
	msgRefuse                       // acceptor → dialer: authentication failed
	msgJoin                         // rank → rank 0
	msgTable                        // rank 0 → rank: every rank's address (binary: table.go)
	msgBarrier                      // rank → rank 0: reached a barrier, with its error if any
	msgRelease                      // rank 0 → rank: every rank reached the barrier
	msgAbort                        // rank 0 → rank: the run failed
)

func (t msgType) String() string {
	names := [...]string{"", "challenge", "hello", "welcome", "refuse", "join", "table", "barrier", "release", "abort"}
	if int(t) < len(names) && t != 0 {
		return names[t]
	}
	return "type " + strconv.Itoa(int(t))
}

// Frame size limits. Before authentication a peer may send only small
// frames, so an unauthenticated client cannot make us allocate much.
const (
	maxHandshakeFrame = 4 << 10
	maxControlFrame   = 16 << 20
)

// writeFrame writes one frame: length (type + payload), type, payload.
func writeFrame(w io.Writer, t msgType, payload []byte) error {
	buf := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(1+len(payload)))
	buf[4] = byte(t)
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame of at most max bytes of payload.
func readFrame(r io.Reader, max int) (msgType, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n == 0 {
		return 0, nil, errors.New("frame with no type")
	}
	if n-1 > uint32(max) {
		return 0, nil, fmt.Errorf("%s frame of %d bytes is over the limit of %d", msgType(hdr[4]), n-1, max)
	}
	payload := make([]byte, n-1)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return msgType(hdr[4]), payload, nil
}

// send writes a message as a JSON frame.
func send(w io.Writer, t msgType, v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", t, err)
	}
	if err := writeFrame(w, t, payload); err != nil {
		return fmt.Errorf("send %s: %w", t, err)
	}
	return nil
}

// decode parses a frame's JSON payload strictly into v.
func decode(t msgType, payload []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", t, err)
	}
	if dec.More() {
		return fmt.Errorf("decode %s: trailing data", t)
	}
	return nil
}

// expect reads one frame, which must be of type want, into v. An abort
// frame is returned as an *abortError whatever was wanted.
func expect(r io.Reader, max int, want msgType, v any) error {
	payload, err := expectFrame(r, max, want)
	if err != nil {
		return err
	}
	return decode(want, payload, v)
}

// expectFrame is expect without the decoding: the payload of a frame of
// type want.
func expectFrame(r io.Reader, max int, want msgType) ([]byte, error) {
	t, payload, err := readFrame(r, max)
	if err != nil {
		return nil, err
	}
	if t == msgAbort && want != msgAbort {
		var a abortMsg
		if err := decode(t, payload, &a); err != nil {
			return nil, err
		}
		return nil, &abortError{Reason: a.Reason}
	}
	if t != want {
		return nil, fmt.Errorf("got a %s message, want %s", t, want)
	}
	return payload, nil
}

// Limits on what a peer's messages may hold.
const (
	maxAddrs   = 32
	maxAddrLen = 300
	maxTextLen = 4096
)

type challengeMsg struct {
	Version int    `json:"v"`
	Nonce   []byte `json:"nonce"`
}

type helloMsg struct {
	Purpose string `json:"purpose"` // "join" or "peer"
	Rank    int    `json:"rank"`
	Nonce   []byte `json:"nonce"`
	MAC     []byte `json:"mac"`
}

type welcomeMsg struct {
	MAC []byte `json:"mac"`
}

type refuseMsg struct {
	Reason string `json:"reason"`
}

// joinMsg is what a rank tells rank 0 about itself.
type joinMsg struct {
	Rank      int      `json:"rank"`
	Size      int      `json:"size"`
	NodeIndex int      `json:"node_index"`
	Node      string   `json:"node"`
	Hostname  string   `json:"hostname"`
	Addrs     []string `json:"addrs"`
	// Config digests the run's configuration: ranks started with different
	// arguments must not measure together.
	Config string `json:"config"`
	// Machine is the rank's machine key (machineKey), "" when unknown.
	Machine string `json:"machine,omitempty"`
	// Host is the node's provenance, a results.Host, sent by the node's
	// local rank 0 only, and not by one on rank 0's machine. It stays raw
	// JSON until rank 0 reads it: a rank that sends none never builds the
	// encoder of results.Host's dozens of fields, which cost every process
	// a quarter of a millisecond.
	Host json.RawMessage `json:"host,omitempty"`
}

// host decodes the join's provenance, strictly; nil when it has none.
func (m *joinMsg) host() (*results.Host, error) {
	if len(m.Host) == 0 {
		return nil, nil
	}
	var h results.Host
	if err := decode(msgJoin, m.Host, &h); err != nil {
		return nil, fmt.Errorf("rank %d's node description: %w", m.Rank, err)
	}
	return &h, nil
}

// member is one rank in rank 0's table.
type member struct {
	Rank      int      `json:"rank"`
	NodeIndex int      `json:"node_index"`
	Node      string   `json:"node"`
	Hostname  string   `json:"hostname"`
	Addrs     []string `json:"addrs"`
}

type tableMsg struct {
	Members []member `json:"members"`
}

type barrierMsg struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`
	// Timeout says that Error comes from the run's deadline: rank 0 then
	// ends the run as at its own deadline, and names whichever rank's
	// command was still running, not whichever rank's clock ran first.
	Timeout bool `json:"timeout,omitempty"`
	// Exec is how the rank's command ended, at the exec kernel's final
	// barrier (and with its error, when it failed).
	Exec *execReport `json:"exec,omitempty"`
	// Exit says that Error is the rank's command exiting non-zero by
	// itself (commandExit): rank 0 weighs it against its output before
	// it fails the run.
	Exit bool `json:"exit,omitempty"`
	// Traffic names the interfaces the rank's kernel connections crossed,
	// at the final barrier (traffic.go).
	Traffic []string `json:"traffic,omitempty"`
}

// execReport is what a rank tells rank 0 about its command.
type execReport struct {
	Command []string `json:"command"`
	// Outcome is how it ended: "exited with status 0", "stopped by
	// sbench-runner" …
	Outcome string `json:"outcome"`
	// Stderr is the tail of its standard error.
	Stderr string `json:"stderr,omitempty"`
}

type releaseMsg struct {
	Name string `json:"name"`
}

// execStop is the release rank 0 sends when its command has ended: the
// other ranks stop theirs (servers never end by themselves).
const execStop = "exec-stop"

// runDeadline is the release rank 0 sends when the run's deadline passed
// while it waited for the other ranks: they stop as at their own deadline,
// which their clocks may not have reached, and say what was still running.
const runDeadline = "deadline"

// isRelease reports whether f releases name.
func isRelease(f frame, name string) bool {
	var r releaseMsg
	return f.t == msgRelease && decode(f.t, f.payload, &r) == nil && r.Name == name
}

type abortMsg struct {
	Reason string `json:"reason"`
}

// abortError is rank 0's reason for ending the run, as another rank sees it.
type abortError struct{ Reason string }

func (e *abortError) Error() string { return "rank 0 aborted the run: " + e.Reason }

// checkAddrs bounds a peer's address list.
func checkAddrs(addrs []string) error {
	if len(addrs) == 0 || len(addrs) > maxAddrs {
		return fmt.Errorf("%d addresses, want 1 to %d", len(addrs), maxAddrs)
	}
	for _, a := range addrs {
		if a == "" || len(a) > maxAddrLen {
			return fmt.Errorf("bad address %.40q", a)
		}
	}
	return nil
}

func (m *joinMsg) check() error {
	// A node index of -1: the launcher gave no node list (mpirun), rank 0
	// numbers the nodes.
	if m.Rank < 0 || m.Size < 1 || m.Rank >= m.Size || m.NodeIndex < -1 {
		return fmt.Errorf("join: rank %d, size %d, node index %d out of range", m.Rank, m.Size, m.NodeIndex)
	}
	if len(m.Node) > maxTextLen || len(m.Hostname) > maxTextLen || len(m.Config) > maxTextLen || len(m.Machine) > maxTextLen {
		return errors.New("join: field too long")
	}
	if err := checkAddrs(m.Addrs); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	return nil
}

func (m *tableMsg) check(size int) error {
	if len(m.Members) != size {
		return fmt.Errorf("table: %d members, want %d", len(m.Members), size)
	}
	for i, mb := range m.Members {
		if mb.Rank != i || mb.NodeIndex < 0 {
			return fmt.Errorf("table: member %d has rank %d, node index %d", i, mb.Rank, mb.NodeIndex)
		}
		if err := checkAddrs(mb.Addrs); err != nil {
			return fmt.Errorf("table: rank %d: %w", i, err)
		}
	}
	return nil
}

// Handshake. The acceptor sends a nonce; the dialer answers with its own
// nonce and an HMAC over both, its purpose and rank, bound to the job step;
// the acceptor checks it and proves the token back with a second HMAC. The
// token never crosses the wire and a recorded exchange cannot be replayed.

const (
	protoVersion = 1
	nonceLen     = 32
)

func newNonce() []byte {
	b := make([]byte, nonceLen)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return b
}

func handshakeMAC(token []byte, session, role, purpose string, rank int, nonceA, nonceB []byte) []byte {
	m := hmac.New(sha256.New, token)
	fmt.Fprintf(m, "sbench-runner/%d\x00%s\x00%s\x00%s\x00%d\x00", protoVersion, session, role, purpose, rank)
	m.Write(nonceA)
	m.Write(nonceB)
	return m.Sum(nil)
}

// errBadToken is an acceptor's view of a dialer that does not know the token.
var errBadToken = errors.New("bad token")

// errRefused is a dialer's view of an acceptor that rejected its token.
var errRefused = errors.New("connection refused: authentication failed (is SBENCH_TOKEN the same on every rank?)")

// dialHandshake authenticates a connection we opened, as rank for purpose.
func dialHandshake(rw io.ReadWriter, token []byte, session, purpose string, rank int) error {
	var ch challengeMsg
	if err := expect(rw, maxHandshakeFrame, msgChallenge, &ch); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if ch.Version != protoVersion || len(ch.Nonce) != nonceLen {
		return fmt.Errorf("handshake: protocol version %d, nonce of %d bytes; want version %d", ch.Version, len(ch.Nonce), protoVersion)
	}
	nonce := newNonce()
	hello := helloMsg{Purpose: purpose, Rank: rank, Nonce: nonce,
		MAC: handshakeMAC(token, session, "dial", purpose, rank, ch.Nonce, nonce)}
	if err := send(rw, msgHello, hello); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	t, payload, err := readFrame(rw, maxHandshakeFrame)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if t == msgRefuse {
		return errRefused
	}
	if t != msgWelcome {
		return fmt.Errorf("handshake: got a %s message, want welcome", t)
	}
	var w welcomeMsg
	if err := decode(t, payload, &w); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if !hmac.Equal(w.MAC, handshakeMAC(token, session, "accept", purpose, rank, ch.Nonce, nonce)) {
		return errors.New("handshake: the listener does not know the token")
	}
	return nil
}

// acceptHandshake authenticates a connection we accepted and returns the
// dialer's hello. A dialer with a wrong token is told so and refused.
func acceptHandshake(rw io.ReadWriter, token []byte, session string) (helloMsg, error) {
	h, nonce, err := acceptHello(rw, token, session)
	if err != nil {
		return helloMsg{}, err
	}
	return h, welcome(rw, token, session, h, nonce)
}

// acceptHello is the first half of acceptHandshake: it challenges the
// dialer and checks its proof, and returns the hello and the challenge's
// nonce. The caller admits the connection, then sends the welcome: a
// dialer that was welcomed must not find its connection closed under it.
func acceptHello(rw io.ReadWriter, token []byte, session string) (helloMsg, []byte, error) {
	nonce := newNonce()
	if err := send(rw, msgChallenge, challengeMsg{Version: protoVersion, Nonce: nonce}); err != nil {
		return helloMsg{}, nil, err
	}
	var h helloMsg
	if err := expect(rw, maxHandshakeFrame, msgHello, &h); err != nil {
		return helloMsg{}, nil, err
	}
	if len(h.Nonce) != nonceLen {
		return helloMsg{}, nil, fmt.Errorf("nonce of %d bytes, want %d", len(h.Nonce), nonceLen)
	}
	if h.Purpose != "join" && h.Purpose != "peer" {
		return helloMsg{}, nil, fmt.Errorf("unknown purpose %.40q", h.Purpose)
	}
	if !hmac.Equal(h.MAC, handshakeMAC(token, session, "dial", h.Purpose, h.Rank, nonce, h.Nonce)) {
		send(rw, msgRefuse, refuseMsg{Reason: "authentication failed"})
		return helloMsg{}, nil, errBadToken
	}
	return h, nonce, nil
}

// welcome proves the token back to a dialer whose hello was good.
func welcome(w io.Writer, token []byte, session string, h helloMsg, nonce []byte) error {
	return send(w, msgWelcome, welcomeMsg{MAC: handshakeMAC(token, session, "accept", h.Purpose, h.Rank, nonce, h.Nonce)})
}
