package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func tableOf(n, perNode int) tableMsg {
	var t tableMsg
	for r := 0; r < n; r++ {
		t.Members = append(t.Members, member{Rank: r, NodeIndex: r / perNode, Node: fmt.Sprintf("node%03d", r/perNode),
			Hostname: fmt.Sprintf("host%03d", r/perNode), Addrs: []string{fmt.Sprintf("10.0.%d.%d:%d", r/perNode/256, r/perNode%256, 40000+r), fmt.Sprintf("127.0.0.1:%d", 40000+r)}})
	}
	return t
}

func TestTableRoundTrip(t *testing.T) {
	for name, tb := range map[string]tableMsg{
		"512 ranks, 2 per node": tableOf(512, 2),
		"one rank":              tableOf(1, 1),
		// Names that change and come back, one empty (no hostname read in
		// a test's provenance tree), IPv6.
		"odd names": {Members: []member{
			{Rank: 0, NodeIndex: 0, Node: "a", Hostname: "", Addrs: []string{"[2001:db8::1]:5"}},
			{Rank: 1, NodeIndex: 1, Node: "b", Hostname: "", Addrs: []string{"10.0.0.2:6", "127.0.0.1:6"}},
			{Rank: 2, NodeIndex: 0, Node: "a", Hostname: "h", Addrs: []string{"10.0.0.1:7"}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			p := encodeTable(tb)
			got, err := decodeTable(p, len(tb.Members))
			if err != nil || !reflect.DeepEqual(got, tb) {
				t.Fatalf("%v\ngot  %+v\nwant %+v", err, got, tb)
			}
			if err := got.check(len(tb.Members)); err != nil {
				t.Error(err)
			}
			if j, _ := json.Marshal(tb); len(tb.Members) > 100 {
				t.Logf("%d ranks: %d bytes, JSON %d", len(tb.Members), len(p), len(j))
			}
		})
	}
}

// TestTableRefuses: a table is rank 0's word, but it crossed a network:
// anything malformed is an error, never a panic or a huge allocation.
func TestTableRefuses(t *testing.T) {
	good := encodeTable(tableOf(4, 2))
	for name, tt := range map[string]struct {
		p    []byte
		size int
	}{
		"empty":             {nil, 4},
		"other version":     {append([]byte{2}, good[1:]...), 4},
		"more ranks":        {good, 3},
		"truncated":         {good[:len(good)-1], 4},
		"trailing bytes":    {append(bytes.Clone(good), 0), 4},
		"huge count":        {[]byte{tableVersion, 0xff, 0xff, 0xff, 0xff, 0x0f}, 1 << 20},
		"repeat at first":   {[]byte{tableVersion, 1, 0, 0}, 4},
		"no address":        {[]byte{tableVersion, 1, 0, 2, 'a', 2, 'h', 0}, 4},
		"address too long":  {append([]byte{tableVersion, 1, 0, 2, 'a', 2, 'h', 1, 0xff, 0x7f}, make([]byte, 16383)...), 4},
		"node index beyond": {[]byte{tableVersion, 1, 9, 2, 'a', 2, 'h', 1, 4, '1', ':', '1'}, 4},
	} {
		if _, err := decodeTable(tt.p, tt.size); !errors.Is(err, errTable) {
			t.Errorf("%s: %v, want a table error", name, err)
		}
	}
}

// FuzzDecodeTable: any payload decodes cleanly or fails, and what decodes
// encodes back to a table that decodes the same.
func FuzzDecodeTable(f *testing.F) {
	f.Add(encodeTable(tableOf(4, 2)), 4)
	f.Add(encodeTable(tableOf(1, 1)), 1)
	f.Add([]byte{tableVersion, 1, 0, 0}, 2)
	f.Fuzz(func(t *testing.T, p []byte, size int) {
		if size < 0 || size > 4096 {
			return
		}
		tb, err := decodeTable(p, size)
		if err != nil {
			return
		}
		if len(tb.Members) > size {
			t.Fatalf("%d members for a step of %d", len(tb.Members), size)
		}
		again, err := decodeTable(encodeTable(tb), size)
		if err != nil || !reflect.DeepEqual(again, tb) {
			t.Fatalf("re-encoded: %v\n%+v\n%+v", err, again, tb)
		}
	})
}

// BenchmarkDecodeTable: what each rank of a 512-rank step spends on the
// table (its JSON took 5 ms on this machine's cores).
//
//	go test -run '^$' -bench DecodeTable -benchmem ./runner
func BenchmarkDecodeTable(b *testing.B) {
	p := encodeTable(tableOf(512, 2))
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeTable(p, 512); err != nil {
			b.Fatal(err)
		}
	}
}
