"""Paired formatter comparison, judge stability and calibration against labels."""
