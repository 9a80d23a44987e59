package parsers

// MustRead is mustRead for the tests of package parsers_test.
var MustRead = mustRead
