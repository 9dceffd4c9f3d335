import Bus
print("placeholder")
