package rundir

import (
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/validate"
)

// The files of a run directory (the package's doc says what each holds).
const (
	DatasetDir       = "dataset"
	SummaryJSON      = "summary.json"
	SummaryText      = "summary.txt"
	MeasurementsFile = "measurements.parquet"
	CalibrationFile  = "calibration.json"
	LMONodesFile     = "lmo_nodes.parquet"
	LMOLinksFile     = "lmo_links.parquet"
	PredictionsFile  = "predictions.parquet"
	AccuracyFile     = "accuracy.json"
	// InSamplePredictionsFile holds the predictions of validate --in-sample's parameters.
	InSamplePredictionsFile = "predictions_in_sample.parquet"
	HealthFile              = "health.json"
	FiguresDir              = "figures"
	ReportFile              = "report.html"
)

// Table is a Parquet table file of a run directory, beside its dataset's.
type Table struct {
	File  string
	Table *datasets.Table
}

// Tables lists the Parquet files a run directory may hold besides its dataset's tables, with
// their tables, in the order the run writes them.
func Tables() []Table {
	return []Table{
		{MeasurementsFile, MeasurementsTable},
		{LMONodesFile, lmoNodesTable},
		{LMOLinksFile, lmoLinksTable},
		{PredictionsFile, validate.PredictionsTable},
	}
}
