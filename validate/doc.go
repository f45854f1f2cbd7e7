// Package validate scores the contention models' predictions against transfers held out of
// the calibration: per held-out transfer and model, the measured mean time, the model's
// prediction and signed error ε = (T_pred − T_meas)/T_meas (predictions.parquet, one row per
// transfer and model); per setting (|N|, d) and model,
// the columns of Table II of Zhu et al. (CCPE 2014): transfers, mean Algorithm-2 steps, mean
// |ε| with its standard error, the share with |ε| ≤ 10%, and the mean |ε| on patterns with
// asymmetric traffic on a link; beside each, the noise limit of the repetitions' spread; and
// the accuracy per situation (what else a transfer's pattern sends where it goes) and per
// transfer size, which say where the error that remains comes from.
package validate
