package store

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDecodersAgreeWithJSON: the fast decoders give what encoding/json
// gives for what the store writes (json.Marshal of tags and pairs), and
// hand anything else to it — escapes, spaces, other shapes.
func TestDecodersAgreeWithJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"from", "to", "n01", "", "a b", `q"uote`, "<&>", "é", "round", "7", `back\slash`, "\t"}
	in := interner{}
	for i := 0; i < 2000; i++ {
		m := map[string]string{}
		for range rng.IntN(5) {
			m[alphabet[rng.IntN(len(alphabet))]] = alphabet[rng.IntN(len(alphabet))]
		}
		data, _ := json.Marshal(m)
		got, err := in.decodeTags(data)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("decodeTags(%s) = %v, %v; want %v", data, got, err, m)
		}
		ints := make([]int, 1+rng.IntN(3))
		for j := range ints {
			ints[j] = rng.IntN(2000) - 1000
		}
		data, _ = json.Marshal(ints)
		if got, err := decodeInts(data); err != nil || !reflect.DeepEqual(got, ints) {
			t.Fatalf("decodeInts(%s) = %v, %v", data, got, err)
		}
	}
	for _, tt := range []struct {
		in   string
		want map[string]string
	}{
		{`{ "a" : "b" }`, map[string]string{"a": "b"}},
		{`{}`, map[string]string{}},
		{`{"a":"\u00e9"}`, map[string]string{"a": "é"}},
	} {
		if got, err := in.decodeTags([]byte(tt.in)); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeTags(%s) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`{"a":1}`, `{"a"`, `[1]`, `{"a":"b",}`} {
		if _, err := in.decodeTags([]byte(bad)); err == nil {
			t.Errorf("decodeTags(%s) took it", bad)
		}
	}
	if got, err := decodeInts([]byte(" [1, 2]")); err != nil || !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("decodeInts with spaces = %v, %v", got, err)
	}
	if got, _ := in.decodeTags(nil); got != nil {
		t.Errorf("NULL tags = %v", got)
	}
}
