package parsers

import (
	"bytes"
	"io"

	"github.com/sbench/sbench/results"
)

func init() {
	Register(Format{
		Name:  "bundle",
		Tools: "sbench-runner's result bundles (" + results.Schema + ")",
		Sniff: sniffBundle,
		Parse: parseBundle,
	})
}

func sniffBundle(head []byte) int {
	if bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) && bytes.Contains(head, []byte(`"sbench.result/`)) {
		return 100
	}
	return 0
}

func parseBundle(name string, r io.Reader) ([]*results.Bundle, error) {
	b, err := results.Decode(r)
	if err != nil {
		return nil, SyntaxErrors{{FileName: name, Msg: err.Error()}}
	}
	return []*results.Bundle{b}, nil
}
