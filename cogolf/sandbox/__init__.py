"""Running untrusted programs: the interface in `api`, implementations beside it."""
