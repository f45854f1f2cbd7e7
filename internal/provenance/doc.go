// Package provenance says what every output of commcal records of its making: the tool's
// version and the creation time, which SOURCE_DATE_EPOCH fixes for byte-identical outputs.
package provenance
