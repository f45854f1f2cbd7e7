// Package pipeline chains commcal's stages (ingest, and later estimate, validate and plot)
// into run directories, and records what every output came from: tool version, creation time,
// the embedded sample dataset that `commcal run` uses by default.
package pipeline
