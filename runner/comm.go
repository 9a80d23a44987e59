package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbench/sbench/results"
)

// Timeouts of the protocol's own steps. The bootstrap and run deadlines are
// the user's; these only bound what a healthy peer answers at once.
const (
	handshakeTimeout = 10 * time.Second
	dialTimeout      = 5 * time.Second
	abortTimeout     = 2 * time.Second
	maxPollInterval  = 500 * time.Millisecond
)

// finalBarrier names the barrier that ends a run; after it a closed control
// connection is a rank exiting normally, not a rank dying.
const finalBarrier = "end"

// tcpConn is what a kernel's link needs of a TCP connection: a *net.TCPConn,
// or in tests any net.Conn.
type tcpConn interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// comm connects this rank to the others of its step: the listener every
// rank has, the control connections (rank 0 holds one per rank, every other
// rank one to rank 0), and the point-to-point connections of the kernels.
type comm struct {
	id        Identity
	token     []byte
	log       *logger
	ioTimeout time.Duration
	// fail ends the run with a cause; control connections call it when a
	// rank reports an error or disappears.
	fail context.CancelCauseFunc
	// timeout is the cause of the run's context ending at the run's
	// deadline; nil without a timeout.
	timeout *runTimeout

	ln    *net.TCPListener
	addrs []string

	// The bootstrap must end by bootDeadline (bootTimeout after the start);
	// ranks other than 0 wait bootGrace longer for rank 0's answer.
	bootTimeout  time.Duration
	bootDeadline time.Time
	bootGrace    time.Duration

	members []member                 // by rank; zero Addrs while unknown
	hosts   map[string]*results.Host // by node name, from each node's local rank 0
	// machine is this rank's machine key (machineKey), when it may
	// describe its node; machines, on rank 0, the key each node's
	// describer joined with, by node name.
	machine  string
	machines map[string]string
	// describe, when set, describes this rank's node for its join, unless
	// rank 0 is on the same machine (bootstrapRank).
	describe func() *results.Host
	ctrl     map[int]*ctrlConn // rank 0: ranks 1…n-1; others: rank 0
	// reports are the exec kernel's reports of ranks 1…n-1, on rank 0.
	reports map[int]*execReport
	// exits are, on rank 0, the errors of the other ranks' commands that
	// exited non-zero by themselves (commandExit), by rank; exited is
	// closed when the first is known. Under mu.
	exits  map[int]error
	exited chan struct{}
	// trafficEnds are the (local, remote) addresses of this rank's kernel
	// connections; rankTraffic, on rank 0, the interfaces the other ranks
	// said theirs crossed (traffic.go). Under mu.
	trafficEnds map[[2]netip.Addr]bool
	rankTraffic map[int][]string

	mu      sync.Mutex
	joining bool
	joinCh  chan joinReq
	done    bool // past the final barrier
	aborted bool
	refused int // connections that failed authentication
	closed  bool
	peers   map[int]chan *net.TCPConn
	// conns are the connections to close at the end: authenticated ones,
	// and the ones this rank dialled.
	conns map[*net.TCPConn]struct{}
	// Connections accepted that have not proven the token yet, and what
	// became of those that never did (accept.go).
	unauth     unauthConns
	strangers  int // unauthenticated connections closed: refused, timed out, evicted
	acceptErrs acceptTrouble
	refusals   *logLimiter
	acceptLog  *logLimiter

	// quit is closed by close; wg counts the goroutines close waits for, so
	// that nothing of a rank outlives its Run.
	quit chan struct{}
	wg   sync.WaitGroup
}

type joinReq struct {
	join joinMsg
	host *results.Host // decoded from join.Host
	conn *net.TCPConn
}

// ctrlConn is a control connection. Once the bootstrap is over a watcher
// goroutine reads it, so that a rank's death or error is noticed while the
// kernel runs, and passes the messages on.
type ctrlConn struct {
	rank int
	conn *net.TCPConn
	msgs chan frame
	wmu  sync.Mutex
}

type frame struct {
	t       msgType
	payload []byte
}

func (cc *ctrlConn) send(t msgType, v any, timeout time.Duration) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", t, err)
	}
	return cc.sendFrame(t, payload, timeout)
}

// sendFrame writes a frame whose payload is encoded already.
func (cc *ctrlConn) sendFrame(t msgType, payload []byte, timeout time.Duration) error {
	cc.wmu.Lock()
	defer cc.wmu.Unlock()
	cc.conn.SetWriteDeadline(time.Now().Add(timeout))
	defer cc.conn.SetWriteDeadline(time.Time{})
	if err := writeFrame(cc.conn, t, payload); err != nil {
		return fmt.Errorf("send %s: %w", t, err)
	}
	return nil
}

// sendAllSerial is the number of ranks up to which sendAll writes one
// rank after the other: a few small writes cost less than goroutines, and
// collectives pass a barrier per iteration.
const sendAllSerial = 32

// sendAll sends one frame to every rank rank 0 holds a control
// connection to; to more than sendAllSerial, all at once: a rank slow to
// read (hundreds of processes on a few cores) holds up only its own. The
// error names the first rank, in rank order, that could not be told.
func (c *comm) sendAll(t msgType, payload []byte) error {
	ranks := c.ranks()
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, r := range ranks {
		if len(ranks) <= sendAllSerial {
			errs[i] = c.ctrl[r].sendFrame(t, payload, dialTimeout)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.ctrl[r].sendFrame(t, payload, dialTimeout)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", c.who(ranks[i]), err)
		}
	}
	return nil
}

func newComm(id Identity, token []byte, log *logger, ioTimeout time.Duration, fail context.CancelCauseFunc) *comm {
	c := &comm{
		id: id, token: token, log: log, ioTimeout: ioTimeout, fail: fail,
		members:  make([]member, id.Size),
		hosts:    map[string]*results.Host{},
		machines: map[string]string{},
		reports:  map[int]*execReport{},
		exits:    map[int]error{},
		exited:   make(chan struct{}),
		ctrl:     map[int]*ctrlConn{},
		peers:    map[int]chan *net.TCPConn{},
		conns:    map[*net.TCPConn]struct{}{},
		quit:     make(chan struct{}),
	}
	c.unauth.init()
	c.refusals = newLogLimiter(log, func(n, logged int, d string) string {
		return fmt.Sprintf("refused %d unauthenticated connections in the last %s (%d logged above)", n, d, logged)
	})
	c.acceptLog = newLogLimiter(log, func(n, logged int, d string) string {
		return fmt.Sprintf("accept failed %d times in the last %s (%d logged above); still accepting", n, d, logged)
	})
	return c
}

// node returns the node of rank: where it joined from, or where the
// launcher should have started it.
func (c *comm) node(rank int) string {
	if rank >= 0 && rank < len(c.members) && c.members[rank].Node != "" {
		return c.members[rank].Node
	}
	return c.id.ExpectedNode(rank)
}

// who names a rank in messages: "rank 1 (node n2)".
func (c *comm) who(rank int) string { return fmt.Sprintf("rank %d (node %s)", rank, c.node(rank)) }

// start opens the listener and serves connections until close.
func (c *comm) start(bind string) error {
	ln, addrs, err := listen(bind, c.log)
	if err != nil {
		return err
	}
	c.ln, c.addrs = ln, addrs
	if c.id.Rank == 0 {
		c.joining = true
		c.joinCh = make(chan joinReq, c.id.Size)
	}
	c.wg.Add(1)
	go c.serve()
	return nil
}

// track registers conn to be closed by close; it reports false, having
// closed conn, when close has already run.
func (c *comm) track(conn *net.TCPConn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.Close()
		return false
	}
	c.conns[conn] = struct{}{}
	return true
}

// drop closes a tracked connection and forgets it.
func (c *comm) drop(conn *net.TCPConn) {
	c.mu.Lock()
	delete(c.conns, conn)
	c.mu.Unlock()
	conn.Close()
}

// handle authenticates an incoming connection and routes it: joins to the
// bootstrap, kernel connections to connect. Anything wrong is logged and the
// connection dropped; the run goes on.
func (c *comm) handle(conn *net.TCPConn) {
	h, ok := c.authenticate(conn)
	if !ok {
		return
	}
	// A rank that proved the token: its join may carry a node's whole
	// provenance, and gets the protocol's usual time for it.
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	refuse := func(format string, args ...any) {
		reason := fmt.Sprintf(format, args...)
		c.log.Printf("refused connection from %s: %s", conn.RemoteAddr(), reason)
		send(conn, msgAbort, abortMsg{Reason: reason})
		c.drop(conn)
	}
	switch h.Purpose {
	case "join":
		if c.id.Rank != 0 {
			refuse("rank %d does not take joins", c.id.Rank)
			return
		}
		var j joinMsg
		if err := expect(conn, maxControlFrame, msgJoin, &j); err != nil {
			refuse("read join of rank %d: %v", h.Rank, err)
			return
		}
		if err := j.check(); err != nil {
			refuse("%v", err)
			return
		}
		if j.Rank != h.Rank {
			refuse("join for rank %d on a connection of rank %d", j.Rank, h.Rank)
			return
		}
		host, err := j.host()
		if err != nil {
			refuse("%v", err)
			return
		}
		conn.SetDeadline(time.Time{})
		c.mu.Lock()
		ok := c.joining
		if ok {
			select {
			case c.joinCh <- joinReq{join: j, host: host, conn: conn}:
			default:
				ok = false
			}
		}
		c.mu.Unlock()
		if !ok {
			refuse("rank %d joined after the bootstrap ended", j.Rank)
		}
	case "peer":
		if h.Rank <= c.id.Rank || h.Rank >= c.id.Size {
			refuse("rank %d may not open a kernel connection to rank %d", h.Rank, c.id.Rank)
			return
		}
		conn.SetDeadline(time.Time{})
		c.mu.Lock()
		ch := c.peerChan(h.Rank)
		c.mu.Unlock()
		select {
		case ch <- conn:
		default:
			refuse("rank %d already has a kernel connection", h.Rank)
		}
	}
}

// peerChan returns the hand-over channel for rank's kernel connection.
// c.mu must be held.
func (c *comm) peerChan(rank int) chan *net.TCPConn {
	ch, ok := c.peers[rank]
	if !ok {
		ch = make(chan *net.TCPConn, 1)
		c.peers[rank] = ch
	}
	return ch
}

// self is this rank's join. host is its node's description, nil for
// none (yet: describe may add one).
func (c *comm) self(host *results.Host, config string) joinMsg {
	hostname := ""
	if host != nil {
		hostname = host.Hostname
	} else {
		hostname, _ = os.Hostname()
	}
	j := joinMsg{
		Rank: c.id.Rank, Size: c.id.Size, NodeIndex: c.id.NodeIndex, Node: c.id.NodeName,
		Hostname: hostname, Addrs: c.addrs, Config: config, Machine: c.machine,
	}
	j.setHost(host)
	return j
}

// setHost puts a node's description into the join.
func (j *joinMsg) setHost(host *results.Host) {
	j.Host = nil
	if host != nil {
		// A results.Host always encodes.
		j.Host, _ = json.Marshal(host)
	}
}

// bootstrap meets every rank of the step within timeout of start: it
// returns once every rank holds the table and has passed the bootstrap
// barrier.
func (c *comm) bootstrap(ctx context.Context, rundir string, start time.Time, timeout time.Duration, self joinMsg) error {
	c.bootTimeout, c.bootDeadline = timeout, start.Add(timeout)
	c.bootGrace = max(5*time.Second, timeout/4)
	if c.id.Rank == 0 {
		return c.bootstrapRoot(ctx, rundir, self)
	}
	return c.bootstrapRank(ctx, rundir, self)
}

func (c *comm) addMember(j joinMsg, host *results.Host) {
	c.members[j.Rank] = member{Rank: j.Rank, NodeIndex: j.NodeIndex, Node: j.Node, Hostname: j.Hostname, Addrs: j.Addrs}
	// The first description of a node wins: ranks whose local rank the
	// launcher does not tell all send one.
	if _, ok := c.hosts[j.Node]; host != nil && !ok {
		c.hosts[j.Node] = host
	}
	// The machine a node's describer is on (only ranks that describe, or
	// would, know theirs).
	if _, ok := c.machines[j.Node]; !ok && j.Machine != "" {
		c.machines[j.Node] = j.Machine
	}
}

// derivedNodes reports whether the launcher gave no node list, so that
// the bootstrap makes one (mpirun).
func (c *comm) derivedNodes() bool { return c.id.NodeIndex < 0 || len(c.id.Nodes) == 0 }

// deriveNodes numbers the nodes of the ranks that joined in order of first
// appearance by rank, as mpirun's ranks give no node list, and sets every
// member's node index and this rank's Nodes and NodeIndex.
func (c *comm) deriveNodes() {
	index := map[string]int{}
	var nodes []string
	counts := []int{}
	for i := range c.members {
		m := &c.members[i]
		if len(m.Addrs) == 0 {
			continue
		}
		k, ok := index[m.Node]
		if !ok {
			k = len(nodes)
			index[m.Node] = k
			nodes = append(nodes, m.Node)
			counts = append(counts, 0)
		}
		m.NodeIndex = k
		counts[k]++
	}
	c.id.Nodes, c.id.NodeIndex = nodes, index[c.id.NodeName]
	c.id.TasksPerNode = compactCounts(counts)
}

func (c *comm) bootstrapRoot(ctx context.Context, rundir string, self joinMsg) error {
	deadline := c.bootDeadline
	host, err := self.host()
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	c.addMember(self, host)
	if err := os.MkdirAll(rundir, 0o755); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	path := addrPath(rundir, c.id)
	if err := publishAddr(path, addrFile{Schema: rendezvousSchema, Session: c.id.Session(), Node: c.id.NodeName, Addrs: c.addrs, Machine: c.machine}); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	pending := c.id.Size - 1
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	defer func() {
		c.mu.Lock()
		c.joining = false
		c.mu.Unlock()
		// Joins that arrived as the bootstrap ended get an answer too.
		for {
			select {
			case req := <-c.joinCh:
				send(req.conn, msgAbort, abortMsg{Reason: "the bootstrap is over"})
				req.conn.Close()
			default:
				return
			}
		}
	}()
	for pending > 0 {
		select {
		case req := <-c.joinCh:
			j := req.join
			cc := &ctrlConn{rank: j.Rank, conn: req.conn, msgs: make(chan frame, 8)}
			var bad string
			switch {
			case j.Rank == 0:
				bad = fmt.Sprintf("a second rank 0 joined from node %s", j.Node)
			case j.Size != c.id.Size:
				bad = fmt.Sprintf("rank %d (node %s) counts %d ranks in the step, rank 0 counts %d", j.Rank, j.Node, j.Size, c.id.Size)
			case c.ctrl[j.Rank] != nil:
				bad = fmt.Sprintf("rank %d joined twice (from node %s and node %s)", j.Rank, c.members[j.Rank].Node, j.Node)
			case !c.derivedNodes() && (j.NodeIndex < 0 || j.NodeIndex >= len(c.id.Nodes)):
				bad = fmt.Sprintf("rank %d (node %s) has node index %d; the step has %d nodes", j.Rank, j.Node, j.NodeIndex, len(c.id.Nodes))
			case j.Config != self.Config:
				bad = fmt.Sprintf("rank %d (node %s) was started with a different configuration (%s, rank 0 has %s)", j.Rank, j.Node, j.Config, self.Config)
			}
			if bad != "" {
				cc.send(msgAbort, abortMsg{Reason: bad}, abortTimeout)
				return fmt.Errorf("bootstrap: %s", bad)
			}
			c.ctrl[j.Rank] = cc
			c.addMember(j, req.host)
			pending--
		case <-timer.C:
			return fmt.Errorf("bootstrap: %s", c.missing())
		case <-ctx.Done():
			return fmt.Errorf("bootstrap: %w", context.Cause(ctx))
		}
	}
	if c.derivedNodes() {
		c.deriveNodes()
	}
	if err := c.sendAll(msgTable, encodeTable(tableMsg{Members: c.members})); err != nil {
		return fmt.Errorf("bootstrap: send the table to %w", err)
	}
	c.watchAll()
	return c.barrier(ctx, "bootstrap", nil, deadline.Add(c.bootGrace))
}

// missing describes the ranks that did not join.
func (c *comm) missing() string {
	var names []string
	for r := 1; r < c.id.Size; r++ {
		if c.ctrl[r] == nil {
			names = append(names, c.who(r))
		}
	}
	n := len(names)
	if n > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", n-10))
	}
	msg := fmt.Sprintf("%d of %d ranks did not join within %s: %s", n, c.id.Size, c.bootTimeout, strings.Join(names, ", "))
	c.mu.Lock()
	refused := c.refused
	c.mu.Unlock()
	switch {
	case refused == 1:
		msg += " (1 connection was refused for a bad token: is SBENCH_TOKEN the same on every rank?)"
	case refused > 1:
		msg += fmt.Sprintf(" (%d connections were refused for a bad token: is SBENCH_TOKEN the same on every rank?)", refused)
	}
	// Rank 0's own trouble comes first: the ranks may have been unable to
	// join rather than absent.
	if trouble := c.listenerTrouble(); trouble != "" {
		msg = trouble + "; " + msg
	}
	return msg
}

func (c *comm) bootstrapRank(ctx context.Context, rundir string, self joinMsg) error {
	path := addrPath(rundir, c.id)
	deadline, timeout := c.bootDeadline, c.bootTimeout
	var conn *net.TCPConn
	var lastErr error
	var published []string
	wait := 5 * time.Millisecond
	for conn == nil {
		data, err := os.ReadFile(path)
		if err == nil {
			var f addrFile
			if f, err = parseAddrFile(data); err == nil {
				published = f.Addrs
				if c.describe != nil {
					// Once: on rank 0's machine, rank 0's description is
					// this node's too.
					if f.Machine == "" || f.Machine != c.machine {
						h := c.describe()
						self.setHost(h)
						self.Hostname = h.Hostname
					}
					c.describe = nil
				}
				conn, err = c.dialAny(ctx, f.Addrs, "join", deadline)
				if errors.Is(err, errRefused) {
					return fmt.Errorf("bootstrap: rank 0 (node %s) at %s: %w", c.node(0), strings.Join(f.Addrs, " "), err)
				}
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			lastErr = err
		}
		if conn != nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("bootstrap: %w", context.Cause(ctx))
		}
		if time.Now().Add(wait).After(deadline) {
			if published == nil {
				if lastErr != nil {
					return fmt.Errorf("bootstrap: rank 0 (node %s) did not publish a usable address in %s within %s: %v", c.node(0), rundir, timeout, lastErr)
				}
				return fmt.Errorf("bootstrap: rank 0 (node %s) did not publish its address in %s within %s", c.node(0), rundir, timeout)
			}
			return fmt.Errorf("bootstrap: could not reach rank 0 (node %s) at %s within %s: %v", c.node(0), strings.Join(published, " "), timeout, lastErr)
		}
		sleep(ctx, wait)
		wait = min(wait*3/2, maxPollInterval)
	}
	cc := &ctrlConn{rank: 0, conn: conn, msgs: make(chan frame, 8)}
	c.ctrl[0] = cc
	if err := cc.send(msgJoin, self, dialTimeout); err != nil {
		return fmt.Errorf("bootstrap: join rank 0 (node %s): %w", c.node(0), err)
	}
	// Rank 0 answers when every rank has joined, or tells us it gave up;
	// it may have started after us, hence the grace.
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Unix(1, 0)) })
	conn.SetReadDeadline(deadline.Add(c.bootGrace))
	var table tableMsg
	payload, err := expectFrame(conn, maxControlFrame, msgTable)
	if err == nil {
		table, err = decodeTable(payload, c.id.Size)
	}
	stop()
	conn.SetReadDeadline(time.Time{})
	if err != nil {
		var abort *abortError
		switch {
		case errors.As(err, &abort):
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("bootstrap: %w", context.Cause(ctx))
		case isTimeout(err):
			return fmt.Errorf("bootstrap: rank 0 (node %s) sent no rank table within %s", c.node(0), timeout+c.bootGrace)
		}
		return fmt.Errorf("bootstrap: rank 0 (node %s): %w", c.node(0), err)
	}
	if err := table.check(c.id.Size); err != nil {
		return fmt.Errorf("bootstrap: rank 0 (node %s): %w", c.node(0), err)
	}
	c.members = table.Members
	if c.derivedNodes() {
		c.deriveNodes() // as rank 0 did, from the same table
	}
	c.watchAll()
	return c.barrier(ctx, "bootstrap", nil, deadline.Add(c.bootGrace))
}

// dialAny connects to the first of addrs that answers and authenticates.
func (c *comm) dialAny(ctx context.Context, addrs []string, purpose string, deadline time.Time) (*net.TCPConn, error) {
	var errs []error
	refused := false
	for _, a := range addrs {
		timeout := min(dialTimeout, time.Until(deadline))
		if timeout <= 0 {
			break
		}
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("address %.80q: want an IP address and a port", a))
			continue
		}
		conn, err := dialTCP(ctx, ap, time.Now().Add(timeout))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		conn.SetDeadline(time.Now().Add(handshakeTimeout))
		if err := dialHandshake(conn, c.token, c.id.Session(), purpose, c.id.Rank); err != nil {
			conn.Close()
			refused = refused || errors.Is(err, errRefused)
			err = fmt.Errorf("%s: %w", a, err)
			if closedEarly(err) {
				err = turnedAway{err}
			}
			errs = append(errs, err)
			continue
		}
		conn.SetDeadline(time.Time{})
		if !c.track(conn) {
			return nil, net.ErrClosed
		}
		return conn, nil
	}
	if refused {
		return nil, errRefused
	}
	if len(errs) == 0 {
		return nil, errors.New("no time left to connect")
	}
	return nil, errs[len(errs)-1]
}

// turnedAway is a dial that the listener closed in the handshake: it had
// too many connections authenticating (strangers' among them), and a
// rank may dial again.
type turnedAway struct{ error }

func (t turnedAway) Unwrap() error { return t.error }

// closedEarly reports whether err is the peer closing the connection.
func closedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ranks returns the ranks this rank has control connections to, in order.
func (c *comm) ranks() []int {
	return slices.Sorted(maps.Keys(c.ctrl))
}

func (c *comm) watchAll() {
	for _, r := range c.ranks() {
		c.wg.Add(1)
		go func(cc *ctrlConn) {
			defer c.wg.Done()
			c.watch(cc)
		}(c.ctrl[r])
	}
}

// watch reads a control connection for the rest of the run. A rank that
// reports an error or whose connection breaks fails the run at once, so the
// kernels stop instead of waiting for a peer that is gone.
func (c *comm) watch(cc *ctrlConn) {
	defer close(cc.msgs)
	for {
		t, payload, err := readFrame(cc.conn, maxControlFrame)
		c.mu.Lock()
		quiet := c.done || c.closed
		c.mu.Unlock()
		if err != nil {
			if !quiet {
				c.fail(fmt.Errorf("lost %s: %s", c.who(cc.rank), describeIOError(err)))
			}
			return
		}
		switch t {
		case msgBarrier:
			var m barrierMsg
			if err := decode(t, payload, &m); err == nil && m.Error != "" {
				c.storeReport(cc.rank, m.Exec)
				if m.Exit {
					// Not a failure yet: rank 0's command may end by
					// itself, its output complete (exec.go).
					c.noteExit(cc.rank, m.Error)
				} else if m.Timeout && c.timeout != nil {
					// The run's deadline, which our clock has not quite
					// reached: not that rank's failure.
					c.fail(c.timeout)
				} else {
					c.fail(fmt.Errorf("%s: %s", c.who(cc.rank), m.Error))
				}
			}
		case msgAbort:
			var m abortMsg
			if err := decode(t, payload, &m); err == nil {
				c.fail(&abortError{Reason: m.Reason})
			}
		case msgRelease:
			var m releaseMsg
			if err := decode(t, payload, &m); err == nil {
				switch m.Name {
				case finalBarrier:
					c.mu.Lock()
					c.done = true
					c.mu.Unlock()
				case runDeadline:
					c.fail(c.timeoutCause())
					continue // no answer to anything: nobody waits for it
				}
			}
		}
		select {
		case cc.msgs <- frame{t: t, payload: payload}:
		case <-c.quit:
			return
		}
	}
}

func (c *comm) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// finish passes the final barrier, with this rank's error if it failed,
// and returns the run's error: on rank 0 the first failure of any rank;
// elsewhere this rank's own error or rank 0's abort. A failing rank keeps
// its connections open until rank 0 answers, so that rank 0 learns the
// reason from it rather than from a closed socket.
func (c *comm) finish(ctx context.Context, runErr error) error {
	if c.id.Rank != 0 {
		// Ranks without a part in the kernel wait here for as long as it
		// runs: only the run's deadline bounds that, and the watcher ends
		// the wait if rank 0 goes away.
		return c.barrier(ctx, finalBarrier, runErr, time.Time{})
	}
	return c.barrier(ctx, finalBarrier, runErr, time.Now().Add(c.ioTimeout))
}

// storeReport keeps a rank's exec report for rank 0.
func (c *comm) storeReport(rank int, r *execReport) {
	if r == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reports[rank] = r
}

// noteExit keeps, on rank 0, that rank's command exited non-zero by
// itself, with its error (the first one heard, from the watcher or the
// barrier).
func (c *comm) noteExit(rank int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.exits[rank]; ok {
		return
	}
	c.exits[rank] = fmt.Errorf("%s: %s", c.who(rank), msg)
	if len(c.exits) == 1 {
		close(c.exited)
	}
}

// commandExits returns the other ranks' commands that exited non-zero by
// themselves, by rank.
func (c *comm) commandExits() map[int]error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.exits)
}

// firstExit is the error of the lowest rank whose command exited non-zero
// by itself, or nil.
func (c *comm) firstExit() error {
	exits := c.commandExits()
	if len(exits) == 0 {
		return nil
	}
	return exits[slices.Min(slices.Collect(maps.Keys(exits)))]
}

// execReports returns the reports received so far, by rank.
func (c *comm) execReports() map[int]*execReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.reports)
}

// broadcast sends a release that is no barrier's (the exec kernel's stop)
// to every rank; a rank that cannot be told is gone, and the final barrier
// will say so.
func (c *comm) broadcast(name string) {
	for _, r := range c.ranks() {
		c.ctrl[r].send(msgRelease, releaseMsg{Name: name}, dialTimeout)
	}
}

// barrier waits until every rank reached the barrier name. On rank 0 an
// error (its own, or any rank's) aborts the run everywhere.
func (c *comm) barrier(ctx context.Context, name string, myErr error, deadline time.Time) error {
	return c.barrierWith(ctx, name, myErr, nil, deadline)
}

// barrierWith is barrier, with an exec report sent along to rank 0.
func (c *comm) barrierWith(ctx context.Context, name string, myErr error, report *execReport, deadline time.Time) error {
	if c.id.Rank == 0 {
		return c.settle(ctx, name, myErr, deadline, nil)
	}
	m := barrierMsg{Name: name, Exec: report}
	if name == finalBarrier {
		m.Traffic = c.traffic()
	}
	var exit *commandExit
	if myErr != nil {
		m.Error, m.Timeout, m.Exit = myErr.Error(), isRunTimeout(myErr), errors.As(myErr, &exit)
	}
	cc := c.ctrl[0]
	if err := cc.send(msgBarrier, m, dialTimeout); err != nil && myErr == nil {
		return fmt.Errorf("barrier %s: rank 0 (node %s): %s", name, c.node(0), describeIOError(err))
	}
	// Wait for rank 0's answer even when failing: rank 0 aborts the run
	// with the reason the run failed, which may be better than ours (our
	// connection to rank 1 closing, when rank 1 found corrupt data). Our
	// context may be over (the run's deadline): wait a little anyway, so
	// that rank 0 reads our reason before our connections close.
	if myErr != nil && ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx)
		deadline = time.Now().Add(abortTimeout)
	}
	f, err := c.next(ctx, cc, deadline)
	if err != nil && myErr == nil && isRunTimeout(context.Cause(ctx)) {
		// The run's deadline passed while this rank had nothing left to
		// do: rank 0 says what was still running (it waits that long at
		// most for the others' last word), and this rank's leaving now
		// would read as its death.
		f, err = c.next(context.WithoutCancel(ctx), cc, time.Now().Add(execKillWait+2*abortTimeout))
	}
	// The exec kernel's stop may come after this rank's command ended by
	// itself: it is no answer to the barrier.
	for err == nil && f.t == msgRelease && isRelease(f, execStop) {
		f, err = c.next(ctx, cc, deadline)
	}
	if err == nil && exit != nil && isRelease(f, name) {
		// Rank 0 found the run complete whatever this command's status:
		// the exit is the run's note, not its failure.
		c.log.Printf("%s; rank 0 found the run's output complete: the run is ok, with this exit noted", myErr)
		return nil
	}
	if err != nil || (myErr != nil && f.t != msgAbort) {
		if myErr != nil {
			return myErr
		}
		return fmt.Errorf("barrier %s: %w", name, err)
	}
	switch f.t {
	case msgRelease:
		var r releaseMsg
		if err := decode(f.t, f.payload, &r); err != nil {
			return fmt.Errorf("barrier %s: %w", name, err)
		}
		if r.Name != name {
			return fmt.Errorf("barrier %s: rank 0 released barrier %q", name, r.Name)
		}
		return nil
	case msgAbort:
		var a abortMsg
		if err := decode(f.t, f.payload, &a); err != nil {
			return fmt.Errorf("barrier %s: %w", name, err)
		}
		return &abortError{Reason: a.Reason}
	}
	return fmt.Errorf("barrier %s: rank 0 sent a %s message", name, f.t)
}

// settle is rank 0's side of a barrier: it waits for every rank, lets
// judge weigh the run once all are there (the exec kernel's output against
// the commands that exited non-zero), and releases the barrier, or aborts
// the run everywhere with the first error. Without judge, a command's
// non-zero exit is the run's failure.
func (c *comm) settle(ctx context.Context, name string, myErr error, deadline time.Time, judge func() error) error {
	if myErr == nil {
		myErr = c.gather(ctx, name, deadline)
	}
	if myErr == nil && judge != nil {
		myErr = judge()
	} else if myErr == nil {
		myErr = c.firstExit()
	}
	if myErr != nil {
		c.abortAll(myErr.Error())
		return myErr
	}
	if name == finalBarrier {
		c.mu.Lock()
		c.done = true
		c.mu.Unlock()
	}
	payload, err := json.Marshal(releaseMsg{Name: name})
	if err != nil {
		return fmt.Errorf("barrier %s: %w", name, err)
	}
	if err := c.sendAll(msgRelease, payload); err != nil {
		return fmt.Errorf("barrier %s: release %w", name, err)
	}
	return nil
}

// gather waits for every other rank's barrier message and returns the
// first failure, naming its rank; a command's non-zero exit is kept for
// settle (noteExit) and the other ranks are still heard.
//
// When the run's deadline passes meanwhile, the ranks still at work are
// told to stop, and their last word awaited: it names the command that was
// still running, which is the verdict, and does not depend on whose clock
// ran first.
func (c *comm) gather(ctx context.Context, name string, deadline time.Time) error {
	var grace time.Time
	for _, r := range c.ranks() {
		f, err := c.next(ctx, c.ctrl[r], deadline)
		if err != nil && isRunTimeout(context.Cause(ctx)) {
			if grace.IsZero() {
				c.broadcast(runDeadline)
				// A rank stops its command with SIGTERM, then SIGKILL.
				grace = time.Now().Add(execKillWait + abortTimeout)
			}
			f, err = c.next(context.WithoutCancel(ctx), c.ctrl[r], grace)
			if err != nil {
				return fmt.Errorf("%s: %w", c.who(r), context.Cause(ctx))
			}
		}
		if err != nil && ctx.Err() != nil {
			// The run ended meanwhile: its cause (another rank's
			// failure, which names that rank, or a signal) stands on
			// its own.
			return context.Cause(ctx)
		}
		if err != nil {
			return fmt.Errorf("barrier %s: %s: %w", name, c.who(r), err)
		}
		if f.t != msgBarrier {
			return fmt.Errorf("barrier %s: %s sent a %s message", name, c.who(r), f.t)
		}
		var m barrierMsg
		if err := decode(f.t, f.payload, &m); err != nil {
			return fmt.Errorf("barrier %s: %s: %w", name, c.who(r), err)
		}
		c.storeReport(r, m.Exec)
		if err := checkTraffic(m.Traffic); err != nil {
			return fmt.Errorf("barrier %s: %s: %w", name, c.who(r), err)
		}
		c.storeTraffic(r, m.Traffic)
		if m.Error != "" && m.Exit {
			c.noteExit(r, m.Error) // settle's to weigh
			continue
		}
		if m.Error != "" {
			return fmt.Errorf("%s: %s", c.who(r), m.Error)
		}
		if m.Name != name {
			return fmt.Errorf("barrier %s: %s is at barrier %q", name, c.who(r), m.Name)
		}
	}
	return nil
}

// next returns the next message of a watched control connection, waiting
// until deadline (zero: as long as ctx lasts). A message that has arrived
// wins over a cancelled context: the watcher cancels the run when it reads
// an abort, and that abort is the better answer.
func (c *comm) next(ctx context.Context, cc *ctrlConn, deadline time.Time) (frame, error) {
	start := time.Now()
	var expired <-chan time.Time
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case f, ok := <-cc.msgs:
		if !ok {
			return frame{}, errors.New("connection closed")
		}
		return f, nil
	case <-ctx.Done():
	case <-expired:
	}
	select {
	case f, ok := <-cc.msgs:
		if ok {
			return f, nil
		}
	default:
	}
	if ctx.Err() != nil {
		return frame{}, context.Cause(ctx)
	}
	return frame{}, fmt.Errorf("no answer within %s", time.Since(start).Round(time.Millisecond))
}

// timeoutCause is the run's deadline as this rank ends at it: its own, or
// rank 0's when it has none.
func (c *comm) timeoutCause() *runTimeout {
	if c.timeout != nil {
		return c.timeout
	}
	return &runTimeout{}
}

// abortAll tells every rank the run failed. Best effort: a dead rank
// cannot be told.
func (c *comm) abortAll(reason string) {
	c.mu.Lock()
	again := c.aborted
	c.aborted = true
	c.mu.Unlock()
	if again {
		return
	}
	var wg sync.WaitGroup
	for _, r := range c.ranks() {
		wg.Add(1)
		go func(cc *ctrlConn) {
			defer wg.Done()
			cc.send(msgAbort, abortMsg{Reason: reason}, abortTimeout)
		}(c.ctrl[r])
	}
	wg.Wait()
}

// connect returns the kernel connection to rank peer: the higher rank dials,
// the lower one accepts. It waits at most the I/O timeout.
func (c *comm) connect(ctx context.Context, peer int) (*net.TCPConn, error) {
	if peer == c.id.Rank || peer < 0 || peer >= c.id.Size {
		return nil, fmt.Errorf("no rank %d to connect to", peer)
	}
	deadline := time.Now().Add(c.ioTimeout)
	if peer < c.id.Rank {
		for wait := 5 * time.Millisecond; ; wait = min(2*wait, maxPollInterval) {
			conn, err := c.dialAny(ctx, c.members[peer].Addrs, "peer", deadline)
			switch {
			case err == nil:
				c.noteTraffic(conn)
				return conn, nil
			case ctx.Err() != nil:
				return nil, context.Cause(ctx)
			case errors.As(err, new(turnedAway)) && time.Now().Add(wait).Before(deadline):
				// Evicted by a flood of strangers' connections: again.
				sleep(ctx, wait)
				continue
			}
			return nil, fmt.Errorf("connect to %s: %w", c.who(peer), err)
		}
	}
	c.mu.Lock()
	ch := c.peerChan(peer)
	c.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case conn := <-ch:
		c.noteTraffic(conn)
		return conn, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-timer.C:
		return nil, fmt.Errorf("%s did not connect within %s", c.who(peer), c.ioTimeout)
	}
}

// close closes the listener and every connection, and waits for the
// goroutines serving them.
func (c *comm) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	conns := c.conns
	c.conns = nil
	unauth := c.unauth.takeAll()
	c.mu.Unlock()
	close(c.quit)
	if c.ln != nil {
		c.ln.Close()
	}
	for conn := range conns {
		conn.Close()
	}
	for _, conn := range unauth {
		conn.Close()
	}
	c.wg.Wait()
	// What was held back of a flood is summed up before the rank's last
	// words, and nothing is logged once Run has returned.
	c.refusals.stop()
	c.acceptLog.stop()
}

// kill drops every connection without a word, as a crashed process would.
// Tests use it to play a rank that dies.
func (c *comm) kill() { c.close() }

// hostsByNode returns the provenance of every node that some rank joined
// from, in node order, with the ranks that ran there.
func (c *comm) hostsByNode() []results.Host {
	if c.derivedNodes() {
		c.deriveNodes() // a bootstrap that failed never got there
	}
	ranks := map[int][]int{}
	names := map[int]member{}
	for _, m := range c.members {
		if len(m.Addrs) > 0 {
			ranks[m.NodeIndex] = append(ranks[m.NodeIndex], m.Rank)
			if _, ok := names[m.NodeIndex]; !ok {
				names[m.NodeIndex] = m
			}
		}
	}
	idx := slices.Sorted(maps.Keys(ranks))
	out := make([]results.Host, 0, len(idx))
	for _, i := range idx {
		var h results.Host
		if p := c.hosts[names[i].Node]; p != nil {
			h = *p
		} else if m := c.machines[names[i].Node]; m != "" && m == c.machine && c.hosts[c.id.NodeName] != nil {
			// A fake node on rank 0's machine did not describe itself.
			h = *c.hosts[c.id.NodeName]
		} else {
			// The node's local rank 0 never reported: say what we know.
			h.Hostname = names[i].Hostname
		}
		h.NodeName = names[i].Node
		if i < len(c.id.Nodes) {
			h.NodeName = c.id.Nodes[i]
		}
		h.Ranks = ranks[i]
		sort.Ints(h.Ranks)
		h.Traffic = c.trafficOfNode(h.Ranks)
		out = append(out, h)
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// isTimeout reports whether err is a deadline's.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// describeIOError says what a failed read or write means for the run.
func describeIOError(err error) string {
	switch {
	case closedEarly(err):
		return "connection closed (the process exited or was killed)"
	case errors.Is(err, net.ErrClosed):
		return "connection closed"
	case isTimeout(err):
		return "timed out"
	}
	return err.Error()
}

// logger writes this rank's messages to stderr, one line each.
type logger struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (l *logger) Printf(format string, args ...any) {
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s%s\n", l.prefix, msg)
}
