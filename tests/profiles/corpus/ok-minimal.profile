default allow
