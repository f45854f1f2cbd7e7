// Package plots draws commcal's figures with gonum.org/v1/plot (design §7): one function per
// figure, each taking plain data and returning a Figure that renders to PNG and SVG. Axes carry
// their units; text that comes from input files (node and cluster names) is escaped by the SVG
// backend.
package plots
