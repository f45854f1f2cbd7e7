package report

// The internals that the package's external tests (package report_test) check.
var (
	Implausible = implausible
	ReadHealth  = readHealth
)
