def greet(name):
    # TODO: localise the greeting
    return f"hello, {name}"
