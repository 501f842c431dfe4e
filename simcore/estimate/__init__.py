"""The vectorized estimator, its lower bounds for the search, and the roofline."""
