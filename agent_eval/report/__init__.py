"""Terminal and HTML reports of runs."""
