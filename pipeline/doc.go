// Package pipeline chains commcal's stages (ingest, summary, estimate, validate, report) into a
// run directory, and holds the sample dataset that `commcal run` uses when given nothing.
package pipeline
