import Bus

extension WeatherUpstreamError {
    /// The bus error reply for this failure.
    public var serviceError: ServiceError {
        ServiceError(status, code, description)
    }
}
