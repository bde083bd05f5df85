"""Evaluation: metrics (pure functions), encoders, and the evaluation commands."""
