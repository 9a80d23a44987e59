package runner

import (
	"container/list"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/sbench/sbench/results"
)

// Anyone who can reach a node can connect to a rank's listener, as often
// and as many times as they like; only the token lets them further. What
// a stranger can cost a rank (memory, log, descriptors, the accept loop)
// is bounded, and rank 0 says when its listener was the trouble.

// Limits on connections that have not proven the token. Variables so that
// tests need not open thousands of connections or wait seconds.
var (
	// maxUnauthenticated caps the connections in their handshake at once,
	// or the step's size less one when that is more (unauthLimit). One more
	// and the oldest is closed: a rank answers the challenge within a
	// round trip, so it is never the oldest for long, while a stranger who
	// connects and says nothing holds no more than this many goroutines
	// and descriptors.
	maxUnauthenticated = 128
	// unauthTimeout is how long a connection has to complete its
	// handshake: a round trip and two HMACs for a real rank.
	unauthTimeout = 3 * time.Second
	// proven, when set, runs once a dialer has proven the token, before
	// its connection is admitted: a test evicts it there.
	proven func(c *comm, conn *net.TCPConn)
)

// Accept errors are retried after a pause that starts at minAcceptBackoff
// and doubles up to maxAcceptBackoff, as net/http's Server.Serve does.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// Log limits for what strangers can trigger: logBurst lines as they come
// in each logInterval, then one line that sums up the rest.
const (
	logBurst    = 3
	logInterval = 10 * time.Second
)

// serve accepts connections until close. It never gives up on an accept
// error: out of descriptors (EMFILE, ENFILE) or kernel buffers, the
// connection stays queued and a rank that gave up would shut out every
// rank still to join for good.
func (c *comm) serve() {
	defer c.wg.Done()
	var backoff time.Duration
	for {
		conn, err := c.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || c.isClosed() {
				return
			}
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			c.acceptFailed(err, backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-c.quit:
				t.Stop()
				return
			}
			continue
		}
		backoff = 0
		if !c.admit(conn) {
			continue
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.handle(conn)
		}()
	}
}

// admit registers a connection for its handshake, closing the oldest
// unauthenticated one when there are maxUnauthenticated already. It
// reports false, having closed conn, once close has run.
func (c *comm) admit(conn *net.TCPConn) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		conn.Close()
		return false
	}
	var evicted *net.TCPConn
	if c.unauth.len() >= c.unauthLimit() {
		evicted = c.unauth.removeOldest()
		c.strangers++
	}
	c.unauth.add(conn)
	c.mu.Unlock()
	if evicted != nil {
		evicted.Close()
		c.refusals.Printf("refused connection from %s: %d newer connections are authenticating", evicted.RemoteAddr(), maxUnauthenticated)
	}
	return true
}

// unauthLimit is how many connections may be in their handshake at once.
// Every other rank of the step may dial rank 0 at the same moment: on a
// few busy cores, hundreds of them take longer than a round trip to answer
// the challenge, and a limit below the step's size would turn ranks away
// in a burst of their own. Rank 0 holds a control connection per rank
// anyway; strangers can at most double that.
func (c *comm) unauthLimit() int { return max(maxUnauthenticated, c.id.Size-1) }

// authenticate runs the handshake of an accepted connection, within
// unauthTimeout. It reports false, having closed and logged the connection,
// when the dialer failed it or close has run.
//
// A connection is admitted (taken off the unauthenticated ones, so that
// nothing evicts it) before the dialer is welcomed: one evicted after its
// proof is closed before the welcome, and the rank dials again, where a
// rank welcomed and then evicted would fail the run.
func (c *comm) authenticate(conn *net.TCPConn) (helloMsg, bool) {
	conn.SetDeadline(time.Now().Add(unauthTimeout))
	h, nonce, err := acceptHello(conn, c.token, c.id.Session())
	if err == nil && proven != nil {
		proven(c, conn)
	}
	c.mu.Lock()
	mine := c.unauth.remove(conn) // false: evicted, or close took it
	closed := c.closed
	switch {
	case err == nil && mine && !closed:
		c.conns[conn] = struct{}{}
	case err != nil && mine:
		c.strangers++
		if errors.Is(err, errBadToken) {
			c.refused++
		}
	}
	c.mu.Unlock()
	if err == nil && mine && !closed {
		if err := welcome(conn, c.token, c.id.Session(), h, nonce); err != nil {
			c.log.Printf("refused connection from %s: welcome rank %d: %v", conn.RemoteAddr(), h.Rank, err)
			c.drop(conn)
			return helloMsg{}, false
		}
		return h, true
	}
	conn.Close()
	if err != nil && mine && !closed {
		c.refusals.Printf("refused connection from %s: %v", conn.RemoteAddr(), err)
	}
	return helloMsg{}, false
}

// acceptTrouble counts the accept errors of a listener.
type acceptTrouble struct {
	n      int
	emfile int // this process's descriptor limit
	enfile int // the system's
	last   error
}

// acceptFailed records and logs (within limits) an accept error. Out of
// descriptors, it closes the oldest unauthenticated connection, if any, so
// that the next accept has one: a flood of silent connections must not
// keep the listener blind until their handshakes time out.
func (c *comm) acceptFailed(err error, backoff time.Duration) {
	var evicted *net.TCPConn
	c.mu.Lock()
	a := &c.acceptErrs
	a.n++
	a.last = err
	switch {
	case errors.Is(err, syscall.EMFILE):
		a.emfile++
	case errors.Is(err, syscall.ENFILE):
		a.enfile++
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		if evicted = c.unauth.removeOldest(); evicted != nil {
			c.strangers++
		}
	}
	c.mu.Unlock()
	if evicted != nil {
		evicted.Close()
		c.refusals.Printf("refused connection from %s: out of file descriptors, it had yet to authenticate", evicted.RemoteAddr())
	}
	msg := fmt.Sprintf("accept: %v; retrying in %s", err, backoff)
	if errors.Is(err, syscall.EMFILE) {
		msg = fmt.Sprintf("accept: %v (ulimit -n %d); retrying in %s", err, nofileLimit(), backoff)
	}
	c.acceptLog.Printf("%s", msg)
}

// listenerTrouble says what may have kept ranks from joining that was this
// rank's listener's doing, or a stranger's; "" when nothing was.
func (c *comm) listenerTrouble() string {
	c.mu.Lock()
	a, strangers, badToken := c.acceptErrs, c.strangers, c.refused
	c.mu.Unlock()
	var msg string
	switch {
	case a.emfile > 0:
		msg = fmt.Sprintf("rank %d ran out of file descriptors while accepting connections (ulimit -n %d)", c.id.Rank, nofileLimit())
	case a.enfile > 0:
		msg = fmt.Sprintf("the node of rank %d ran out of file descriptors (ENFILE) while it accepted connections", c.id.Rank)
	case a.n > 0:
		msg = fmt.Sprintf("rank %d could not accept connections %d time%s (last: %v)", c.id.Rank, a.n, results.Plural(a.n), a.last)
	}
	// Bad tokens have their own note; the others are strangers or ranks
	// shut out by them.
	if n := strangers - badToken; n > 0 {
		if msg == "" {
			return fmt.Sprintf("rank %d refused %d unauthenticated connection%s", c.id.Rank, n, results.Plural(n))
		}
		msg += fmt.Sprintf("; %d unauthenticated connection%s refused", n, results.Plural(n))
	}
	return msg
}

// nofileLimit is this process's soft limit on open files, for messages.
func nofileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// unauthConns are the connections in their handshake, oldest first. Its
// methods need comm.mu.
type unauthConns struct {
	order *list.List // of *net.TCPConn
	at    map[*net.TCPConn]*list.Element
}

func (u *unauthConns) init() {
	u.order, u.at = list.New(), map[*net.TCPConn]*list.Element{}
}

func (u *unauthConns) len() int { return u.order.Len() }

func (u *unauthConns) add(conn *net.TCPConn) { u.at[conn] = u.order.PushBack(conn) }

// remove forgets conn and reports whether it was there.
func (u *unauthConns) remove(conn *net.TCPConn) bool {
	e, ok := u.at[conn]
	if ok {
		u.order.Remove(e)
		delete(u.at, conn)
	}
	return ok
}

// removeOldest forgets the oldest connection and returns it; nil when
// there is none.
func (u *unauthConns) removeOldest() *net.TCPConn {
	e := u.order.Front()
	if e == nil {
		return nil
	}
	conn := e.Value.(*net.TCPConn)
	u.remove(conn)
	return conn
}

// takeAll forgets every connection and returns them.
func (u *unauthConns) takeAll() []*net.TCPConn {
	out := make([]*net.TCPConn, 0, u.order.Len())
	for e := u.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*net.TCPConn))
	}
	u.init()
	return out
}

// logLimiter keeps a message that a stranger can trigger at will from
// flooding the job's log: the first logBurst of each logInterval are
// logged as they come, the rest counted and summed up in one line when the
// interval ends (or at stop).
type logLimiter struct {
	log     *logger
	summary func(n, logged int, d string) string

	mu      sync.Mutex
	start   time.Time
	n       int // messages in this interval
	logged  int // of which logged
	timer   *time.Timer
	stopped bool
}

func newLogLimiter(log *logger, summary func(n, logged int, d string) string) *logLimiter {
	return &logLimiter{log: log, summary: summary}
}

func (l *logLimiter) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if l.n == 0 {
		l.start = time.Now()
		l.timer = time.AfterFunc(logInterval, l.flush)
	}
	l.n++
	if l.logged < logBurst {
		l.logged++
		l.log.Printf(format, args...)
	}
}

func (l *logLimiter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.flushLocked()
	}
}

func (l *logLimiter) flushLocked() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.n > l.logged {
		d := min(time.Since(l.start), logInterval).Round(time.Millisecond)
		if d >= time.Second {
			d = d.Round(100 * time.Millisecond)
		}
		l.log.Printf("%s", l.summary(l.n, l.logged, d.String()))
	}
	l.n, l.logged = 0, 0
}

// stop sums up what was held back; nothing is logged after it returns.
func (l *logLimiter) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.flushLocked()
		l.stopped = true
	}
}
