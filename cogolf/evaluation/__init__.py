"""Running a submission's test suite walled and reading its results, for the offline games."""
