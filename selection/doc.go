// Package selection chooses the contention model: it cross-validates every model on a
// dataset's calibration experiments, measures each model's in-sample reach on the held-out
// transfers, and ranks the models over many datasets on a leaderboard beside the noise limit.
package selection
