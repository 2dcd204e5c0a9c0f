default allow
?futex_waitv errno EPERM
?a_call_from_the_future errno EPERM
