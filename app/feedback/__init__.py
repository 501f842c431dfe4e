"""Measurement feedback (issue 18): measured kernels, measured answers and calibration profiles.

* :mod:`app.feedback.measurements` - the measurement body, its checks and the stored row;
* :mod:`app.feedback.csv_import` - the profiler CSV layout (``measured_msprof_*.csv``);
* :mod:`app.feedback.answers` - the fastest measured kernel as a tune answer;
* :mod:`app.feedback.profiles` - calibration jobs and the preset of a profile.
"""
